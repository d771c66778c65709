import { RecordingLogger } from '@nteract-mcp/foundation/testing';
import { describe, expect, it } from 'vitest';
import { clientContextOf } from './client-context-of.js';

describe(clientContextOf, () => {
  it('sends the kernel environment without withheld variables, naming (never showing) them at debug level', () => {
    const logger = new RecordingLogger();
    const context = clientContextOf({ PATH: '/bin', JUPYTER_TOKEN: 'tok-value', NTERACT_MCP_X: '1' }, '/p', logger);
    expect(context).toEqual({ cwd: '/p', env: { PATH: '/bin' } });
    expect(JSON.stringify(logger.records)).not.toContain('tok-value');
    expect(JSON.stringify(logger.records)).toContain('JUPYTER_TOKEN');
  });

  it('leaves out the largest variables when the environment would not fit a handshake', () => {
    const logger = new RecordingLogger();
    const context = clientContextOf({ SMALL: 'x', HUGE: 'y'.repeat(60 * 1024) }, '/p', logger);
    expect(context.env).toEqual({ SMALL: 'x' });
    expect(JSON.stringify(logger.records)).toContain('HUGE');
  });
});
