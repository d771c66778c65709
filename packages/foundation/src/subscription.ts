/** Undoes a registration (a listener, a watcher). Idempotent. */
export interface Subscription {
  dispose(): void;
}
