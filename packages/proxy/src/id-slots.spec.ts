import { describe, expect, it } from 'vitest';
import { IdSlots } from './id-slots.js';

describe(IdSlots, () => {
  it('finds each id, also when another live id holds its slot', () => {
    const slots = new IdSlots<string>();
    slots.set(5, 'five');
    // 1,029 is 5 more than the slots: the same slot, kept beside.
    slots.set(1029, 'late');
    expect(slots.get(5)).toBe('five');
    expect(slots.get(1029)).toBe('late');
    slots.delete(5);
    expect(slots.get(5)).toBeUndefined();
    expect(slots.get(1029)).toBe('late');
    slots.delete(1029);
    expect(slots.get(1029)).toBeUndefined();
  });

  it('tells ids apart by value: -0 is 0, large and negative ids work', () => {
    const slots = new IdSlots<string>();
    slots.set(-0, 'zero');
    expect(slots.get(0)).toBe('zero');
    slots.set(2 ** 40 + 3, 'large');
    slots.set(-3, 'negative');
    expect(slots.get(2 ** 40 + 3)).toBe('large');
    expect(slots.get(-3)).toBe('negative');
    expect(slots.get(3)).toBeUndefined();
  });
});
