import { describe, expect, it } from 'vitest';
import { redactCredentials, redactFromLibraryConsole } from './route-library-console.js';

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
