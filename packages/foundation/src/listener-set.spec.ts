import { describe, expect, it } from 'vitest';
import { ListenerSet } from './listener-set.js';

describe(ListenerSet, () => {
  it('tells every listener in order, each added one of its own; a thrower is reported and the rest still told', () => {
    const errors: unknown[] = [];
    const told: string[] = [];
    const listeners = new ListenerSet<number>((error) => errors.push(error));
    const first = (value: number) => told.push(`first ${value}`);
    listeners.add(first);
    listeners.add(() => {
      throw new Error('boom');
    });
    const again = listeners.add(first);
    listeners.tell(1);
    expect(told).toEqual(['first 1', 'first 1']);
    expect(errors).toHaveLength(1);
    again.dispose();
    listeners.tell(2);
    expect(told).toEqual(['first 1', 'first 1', 'first 2']);
    expect(listeners.size).toBe(2);
  });

  it('tells once and forgets, for an event that happens once', () => {
    const told: number[] = [];
    const listeners = new ListenerSet<number>(() => undefined);
    listeners.add((value) => told.push(value));
    listeners.tellOnce(7);
    listeners.tell(8);
    expect(told).toEqual([7]);
    expect(listeners.size).toBe(0);
  });
});
