import { RecordingLogger } from '@nteract-mcp/core/testing';
import { describe, expect, it } from 'vitest';
import { redactCredentials, redactFromLibraryConsole, routeLibraryConsole } from './route-library-console.js';

describe(redactCredentials, () => {
  it('blanks registered tokens, ?token= values and Authorization token headers', () => {
    redactFromLibraryConsole('registered-secret');
    expect(
      redactCredentials(
        'ws://h/api/kernels/k/channels?session_id=s&token=abc123 Authorization: token xyz789 and registered-secret',
      ),
    ).toBe(
      'ws://h/api/kernels/k/channels?session_id=s&token=[redacted] Authorization: token [redacted] and [redacted]',
    );
  });
});

describe(routeLibraryConsole, () => {
  it('sends console output to the logger (stderr), never stdout, with credentials redacted; once per process', () => {
    const methods = ['debug', 'log', 'info', 'warn', 'error'] as const;
    const saved = methods.map((name) => console[name]);
    const marker = Symbol.for('@nteract-mcp/plugin-hosted/route-library-console');
    const stdoutWrite = process.stdout.write;
    const written: string[] = [];
    process.stdout.write = ((chunk: string) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    const logger = new RecordingLogger();
    try {
      redactFromLibraryConsole('tok-123');
      routeLibraryConsole(logger);
      routeLibraryConsole(new RecordingLogger());
      // What @jupyterlab/services writes, method by method, once routed (nothing reaches stdout).
      const libraryLines: [(typeof methods)[number], unknown[]][] = [
        ['debug', ['Starting WebSocket: ws://h/api/kernels/k?token=tok-123']],
        ['log', ['Server selected unknown kernel wire protocol:', 'x']],
        ['warn', ['Connection lost, reconnecting in %d seconds.', 2]],
        ['error', [new Error('failed with tok-123')]],
      ];
      for (const [method, args] of libraryLines) console[method](...args);
    } finally {
      process.stdout.write = stdoutWrite;
      methods.forEach((name, i) => {
        console[name] = saved[i] as never;
      });
      delete (console as unknown as Record<symbol, unknown>)[marker];
    }
    expect(written).toEqual([]);
    const lines = logger.records.map((record) => `${record.level} ${record.message}`);
    expect(lines[0]).toBe('debug Starting WebSocket: ws://h/api/kernels/k?token=[redacted]');
    expect(lines[1]).toBe('debug Server selected unknown kernel wire protocol: x');
    expect(lines[2]).toBe('warn Connection lost, reconnecting in 2 seconds.');
    expect(lines[3]).toMatch(/^error Error: failed with \[redacted\]/);
    expect(JSON.stringify(logger.records)).not.toContain('tok-123');
  });
});
