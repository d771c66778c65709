import { describe, expect, it } from 'vitest';
import type { EraDialect } from '../../contributions/protocol-admission.js';
import type { NotebookHandle } from '../../ports/notebook-handle.js';
import type { SessionSlot } from '../../session/session-slot.js';
import type { ConfirmationQuestion } from '../tools/child-tool-registry.js';
import { PersonConfirmations } from './person-confirmations.js';

const question: ConfirmationQuestion = {
  title: 'Install packages',
  message: 'Install demo into /v?',
  unasked: 'not asked',
  refusal: 'Refused: the person can allow it in their config.',
  fingerprint: 'f'.repeat(64),
};

function confirmations(sendsRequests: boolean, answers: unknown[] = []) {
  const asked: unknown[] = [];
  const slot = { active: { handle: { notebookId: 'nb' } as NotebookHandle } } as unknown as SessionSlot;
  const subject = new PersonConfirmations({
    slot,
    dialect: () => ({ sendsRequests }) as EraDialect,
    elicit: async (params) => {
      asked.push(params);
      return answers.shift();
    },
  });
  const confirm = { question: async () => question };
  return { subject, confirm, asked };
}

const yes = { action: 'accept', content: { confirm: true } };

describe('PersonConfirmations', () => {
  it('refuses a required question when the client cannot ask: nothing runs', async () => {
    const { subject, confirm } = confirmations(true);
    expect(await subject.check('install_packages', confirm, {}, {})).toEqual({
      kind: 'answer',
      result: { content: [{ type: 'text', text: question.refusal }], isError: true },
    });
  });

  it('where it may send requests: asks, and a yes runs the call with the fingerprint it was for', async () => {
    const { subject, confirm, asked } = confirmations(true, [yes]);
    expect(await subject.check('install_packages', confirm, {}, { elicitation: {} })).toEqual({
      kind: 'run',
      confirmed: { fingerprint: question.fingerprint },
    });
    expect(asked).toEqual([expect.objectContaining({ message: question.message })]);
  });

  it('where it sends none: input_required naming the fingerprint; a retry for another one is asked again', async () => {
    const { subject, confirm } = confirmations(false);
    const state = `install_packages:${question.fingerprint}`;
    const first = await subject.check('install_packages', confirm, {}, { elicitation: {} });
    expect(first).toMatchObject({ kind: 'answer', result: { resultType: 'input_required', requestState: state } });
    const stale = await subject.check(
      'install_packages',
      confirm,
      { inputResponses: { confirm: yes }, requestState: `install_packages:${'0'.repeat(64)}` },
      { elicitation: {} },
    );
    expect(stale).toMatchObject({ kind: 'answer', result: { resultType: 'input_required', requestState: state } });
    expect(
      await subject.check(
        'install_packages',
        confirm,
        { inputResponses: { confirm: yes }, requestState: state },
        {
          elicitation: {},
        },
      ),
    ).toEqual({ kind: 'run', confirmed: { fingerprint: question.fingerprint } });
    const declined = await subject.check(
      'install_packages',
      confirm,
      { inputResponses: { confirm: { action: 'decline' } }, requestState: state },
      { elicitation: {} },
    );
    expect(declined).toMatchObject({
      kind: 'answer',
      result: { content: [{ text: expect.stringContaining('nothing was changed') }] },
    });
  });
});
