import { describe, expect, it } from 'vitest';
import { type ChildLine, ChildLineReader } from './child-line-reader.js';

const answerLine = (id: number, text: string) =>
  `{"result":{"content":[{"type":"text","text":${JSON.stringify(text)}}]},"jsonrpc":"2.0","id":${id}}\n`;

/** What each line came out as: `answer <id>`, `message <method or id>`, or `error <reason> <id>`. */
function describeLines(lines: readonly ChildLine[]): string[] {
  return lines.map((line) => {
    if (line.kind === 'answer') return `answer ${line.answer.id}`;
    if (line.kind === 'message') {
      const message = line.message as { method?: string; id?: unknown };
      return `message ${message.method ?? String(message.id)}`;
    }
    return `error ${line.reason} ${String(line.response.id)}`;
  });
}

describe(ChildLineReader, () => {
  it('reads SDK-laid-out answers without parsing them and frames every other line as the framer does, in order', () => {
    const reader = new ChildLineReader();
    const lines = reader.push(
      Buffer.from(
        `${answerLine(1, 'a')}{"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n` +
          `{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"no"}}\n\n{not json}\n${answerLine(3, 'c')}` +
          '{"jsonrpc":"2.0","id":4,"result":{}}\n',
      ),
    );
    expect(describeLines(lines)).toEqual([
      'answer 1',
      'message notifications/progress',
      'message 2',
      'error parse-error null',
      'answer 3',
      'message 4', // another layout: parsed by the framer
    ]);
  });

  it('reassembles lines split anywhere, also inside a multi-byte UTF-8 character', () => {
    const text = answerLine(5, 'ünï ✓ 😀 日本');
    const bytes = Buffer.from(text + answerLine(6, 'x'), 'utf8');
    for (let cut = 1; cut < bytes.length; cut++) {
      const reader = new ChildLineReader();
      const lines = [...reader.push(bytes.subarray(0, cut)), ...reader.push(bytes.subarray(cut))];
      expect(describeLines(lines), `cut at ${cut}`).toEqual(['answer 5', 'answer 6']);
      const first = lines[0];
      if (first?.kind !== 'answer') throw new Error('not an answer');
      expect(JSON.parse(first.answer.line.toString('utf8', 0, first.answer.end)).result.content[0].text).toBe(
        'ünï ✓ 😀 日本',
      );
    }
  });

  it('hands a line over the cap to the framer, which drops it with one error for its id, and reads on', () => {
    const reader = new ChildLineReader({ maxLineBytes: 100 });
    const long = answerLine(8, 'x'.repeat(200));
    const lines = [
      ...reader.push(Buffer.from(long.slice(0, 30))),
      ...reader.push(Buffer.from(long.slice(30, 150))),
      ...reader.push(Buffer.from(long.slice(150) + answerLine(9, 'ok'))),
    ];
    expect(describeLines(lines)).toEqual(['error line-too-long 8', 'answer 9']);
  });
});
