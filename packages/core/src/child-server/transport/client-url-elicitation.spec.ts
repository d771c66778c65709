import { ElicitationCompleteNotificationSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { ContainerModule } from 'inversify';
import { afterEach, describe, expect, it } from 'vitest';
import { type BackendConnectContext, NotebookBackend } from '../../contributions/notebook-backend.js';
import type { AdmissionOpening, AdmissionRequest, ServerDescription } from '../../contributions/protocol-admission.js';
import { ProtocolAdmission } from '../../contributions/protocol-admission.js';
import { sdkDialect } from '../../contributions/sdk-dialect.js';
import { definePlugin } from '../../di/mcp-plugin.js';
import { firstPartyIdentities, type NotebookTarget } from '../../notebook-target/notebook-target.js';
import { FakeInitializeEra } from '../../testing/fake-initialize-era.js';
import { FakeNotebookBackend } from '../../testing/fake-notebook-backend.js';
import {
  type ChildServerTestHarness,
  startChildServerTestHarness,
} from '../../testing/start-child-server-test-harness.js';
import { declaresUrlElicitation } from './client-url-elicitation.js';

/** An `initialize` era that holds the client's declared capabilities; its dialect sends requests or not. */
class DeclaringEra extends FakeInitializeEra {
  public constructor(private readonly sendsRequests: boolean) {
    super();
  }

  public override open(request: AdmissionRequest, opening: AdmissionOpening, server: ServerDescription) {
    const declared = (request.params as { capabilities?: Record<string, unknown> } | undefined)?.capabilities;
    return {
      ...super.open(request, opening, server),
      dialect: { ...sdkDialect, sendsRequests: this.sendsRequests },
      clientCapabilities: () => declared,
    };
  }
}

function declaringEra(sendsRequests: boolean) {
  return definePlugin({
    id: 'test.declaring-era',
    module: new ContainerModule(({ bind }) => {
      bind(ProtocolAdmission).toConstantValue(new DeclaringEra(sendsRequests));
    }),
  });
}

/** A `url` backend that asks the person through the call's URL elicitation, when it has one, then opens a notebook of the fake daemon. */
function askingBackend(
  seen: { context?: BackendConnectContext; answer?: string },
  harness: () => ChildServerTestHarness,
) {
  const backend = new FakeNotebookBackend({
    id: 'test.asking',
    kind: 'hosted-url',
    argument: 'url',
    identity: firstPartyIdentities['hosted-url'],
    recognizes: (raw) => raw.startsWith('http'),
    parse: (raw) =>
      ({ kind: 'hosted-url', url: raw, serverUrl: raw, notebookPath: 'a.ipynb', token: undefined }) as NotebookTarget,
    connect: async (_target, context) => {
      seen.context = context;
      if (context.urlElicitation) {
        seen.answer = await context.urlElicitation.ask(
          { elicitationId: 'e-1', url: 'http://127.0.0.1:1/page', message: 'Give the token of the server.' },
          context.signal,
        );
        context.urlElicitation.completed('e-1');
      }
      return (harness().daemon ?? { openNotebook: () => Promise.reject(new Error('no daemon')) }).openNotebook(
        `${harness().cwd}/a.ipynb`,
        { peerLabel: context.peerLabel },
      );
    },
  });
  return definePlugin({
    id: 'test.asking-backend',
    module: new ContainerModule(({ bind }) => {
      bind(NotebookBackend).toConstantValue(backend);
    }),
  });
}

describe(declaresUrlElicitation, () => {
  it('is true only for a client that declared elicitation with url', () => {
    expect(declaresUrlElicitation({ elicitation: { url: {} } })).toBe(true);
    expect(declaresUrlElicitation({ elicitation: { form: {}, url: {} } })).toBe(true);
    expect(declaresUrlElicitation({ elicitation: {} })).toBe(false);
    expect(declaresUrlElicitation({ elicitation: { form: {} } })).toBe(false);
    expect(declaresUrlElicitation({})).toBe(false);
    expect(declaresUrlElicitation(undefined)).toBe(false);
  });
});

describe('URL elicitation for a backend during a tool call', () => {
  let harness: ChildServerTestHarness;
  afterEach(async () => {
    await harness.close();
  });

  it('a client that declared URL-mode elicitation, on a connection where the server may send requests: the backend’s ask is an elicitation/create with mode url, its completion a notifications/elicitation/complete', async () => {
    const seen: { context?: BackendConnectContext; answer?: string } = {};
    harness = await startChildServerTestHarness({
      clientCapabilities: { elicitation: { url: {} } },
      plugins: [askingBackend(seen, () => harness)],
    });
    const asked: unknown[] = [];
    const completed: string[] = [];
    harness.client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return { action: 'accept' };
    });
    harness.client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => {
      completed.push(notification.params.elicitationId);
    });
    const connected = await harness.callJson('connect_notebook', { url: 'http://server.test/lab/tree/a.ipynb' });
    expect(connected).toMatchObject({ connected: true });
    expect(asked).toEqual([
      { mode: 'url', elicitationId: 'e-1', url: 'http://127.0.0.1:1/page', message: 'Give the token of the server.' },
    ]);
    expect(seen.answer).toBe('accept');
    await expect.poll(() => completed).toEqual(['e-1']);
  });

  it('behind an era whose dialect sends requests, the same; the person’s decline reaches the backend as decline', async () => {
    const seen: { context?: BackendConnectContext; answer?: string } = {};
    harness = await startChildServerTestHarness({
      clientCapabilities: { elicitation: { url: {} } },
      eras: [declaringEra(true)],
      plugins: [askingBackend(seen, () => harness)],
    });
    harness.client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'decline' }));
    await harness.callJson('connect_notebook', { url: 'http://server.test/lab/tree/a.ipynb' });
    expect(seen.answer).toBe('decline');
  });

  it('no URL elicitation for a client that declared only form elicitation, or none, nor on a connection whose dialect sends no requests', async () => {
    const cases = [
      { clientCapabilities: { elicitation: { form: {} } } },
      {
        clientCapabilities: { elicitation: { url: {} } },
        eras: [declaringEra(false)],
      },
      { clientCapabilities: {} },
    ];
    for (const options of cases) {
      const seen: { context?: BackendConnectContext; answer?: string } = {};
      harness = await startChildServerTestHarness({ ...options, plugins: [askingBackend(seen, () => harness)] });
      await harness.callJson('connect_notebook', { url: 'http://server.test/lab/tree/a.ipynb' });
      expect(seen.context?.urlElicitation, JSON.stringify(options)).toBeUndefined();
      await harness.close();
    }
    harness = await startChildServerTestHarness();
  });
});
