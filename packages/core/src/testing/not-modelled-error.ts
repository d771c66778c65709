/**
 * A test fake was asked to do something it does not model (execute without an executor, write
 * after exit, connect without a peer label). Not a `CoreError`: no production path may handle it,
 * so a test that reaches it fails loudly instead of exercising a recovery branch by accident.
 */
export class NotModelledError extends Error {
  public constructor(fake: string, what: string) {
    super(`${fake}: ${what}`);
    this.name = 'NotModelledError';
  }
}
