import type { JsonRpcRequest } from '@nteract-mcp/core';
import { describe, expect, it } from 'vitest';
import { type InFlightRequest, InFlightRequests } from './in-flight-requests.js';

const request = (id: number | string, method = 'tools/call'): JsonRpcRequest =>
  ({ jsonrpc: '2.0', id, method, params: { name: 'create_cell' } }) as JsonRpcRequest;
const childA = { name: 'a' };
const childB = { name: 'b' };
const childC = { name: 'c' };
const always = () => true;
const never = () => false;

describe(InFlightRequests, () => {
  it('tells ids apart by type and value, and finds a sent request by its child id on that child only', () => {
    const ledger = new InFlightRequests<object>();
    const number = ledger.add(request(7), 'create_cell');
    const text = ledger.add(request('7'), 'create_cell');
    expect(ledger.get(7)).toBe(number);
    expect(ledger.get('7')).toBe(text);
    ledger.markSent(number, childA, 41);
    expect(ledger.sentAs(childA, 41)).toBe(number);
    expect(ledger.sentAs(childB, 41)).toBeUndefined();
    expect(ledger.sentAs(childA, '41')).toBeUndefined();
    expect(ledger.sentAs(childA, 42)).toBeUndefined();
  });

  it('sends an unsent request to the next child, keeps one already there', () => {
    const ledger = new InFlightRequests<object>();
    const pending = ledger.add(request(1), undefined);
    expect(ledger.redeliveryTo(pending, childA, never)).toBe('send');
    ledger.markSent(pending, childA, 1);
    expect(ledger.redeliveryTo(pending, childA, never)).toBe('keep');
    expect(pending.resent).toBe(false);
  });

  it('resends a sent request once when safe; the second death makes its outcome unknown', () => {
    const ledger = new InFlightRequests<object>();
    const pending = ledger.add(request(1), 'connect_notebook');
    ledger.markSent(pending, childA, 1);
    expect(ledger.redeliveryTo(pending, childB, always)).toBe('send');
    expect(pending.resent).toBe(true);
    ledger.markSent(pending, childB, 2);
    // The old child id no longer finds it; the new one does.
    expect(ledger.sentAs(childA, 1)).toBeUndefined();
    expect(ledger.sentAs(childB, 2)).toBe(pending);
    expect(ledger.redeliveryTo(pending, childC, always)).toBe('outcome-unknown');
  });

  it('makes the outcome of an unsafe sent request unknown at once', () => {
    const ledger = new InFlightRequests<object>();
    const pending = ledger.add(request(1), 'create_notebook');
    ledger.markSent(pending, childA, 1);
    expect(ledger.redeliveryTo(pending, childB, never)).toBe('outcome-unknown');
  });

  it('takes a request once, cancelling its timers, and forgets its ids', () => {
    const ledger = new InFlightRequests<object>();
    const pending: InFlightRequest<object> = ledger.add(request(1), undefined);
    const cancelled: string[] = [];
    pending.timer = { cancel: () => cancelled.push('timer') };
    pending.fallback = { cancel: () => cancelled.push('fallback') };
    ledger.markSent(pending, childA, 5);
    expect(ledger.take(pending)).toBe(true);
    expect(ledger.take(pending)).toBe(false);
    expect(cancelled).toEqual(['timer', 'fallback']);
    expect(ledger.has(1)).toBe(false);
    expect(ledger.sentAs(childA, 5)).toBeUndefined();
    expect(ledger.size).toBe(0);
    // A new request under the same upstream id is a different request: the old handle cannot take it.
    const again = ledger.add(request(1), undefined);
    expect(ledger.take(pending)).toBe(false);
    expect(ledger.all()).toEqual([again]);
  });

  it('keeps the order requests came in, whatever their ids, and finds each after many came and went', () => {
    const ledger = new InFlightRequests<object>();
    const first = ledger.add(request(3000), undefined);
    for (let id = 0; id < 2000; id++) ledger.take(ledger.add(request(id), undefined));
    const text = ledger.add(request('a'), undefined);
    const fraction = ledger.add(request(1.5), undefined);
    // 4,024 is 3,000 plus four times the 1,024 slots: the slot of the first request.
    const late = ledger.add(request(4024), undefined);
    expect(ledger.all()).toEqual([first, text, fraction, late]);
    expect(ledger.get(3000)).toBe(first);
    expect(ledger.get(4024)).toBe(late);
    expect(ledger.size).toBe(4);
    ledger.take(text);
    expect(ledger.all()).toEqual([first, fraction, late]);
    ledger.take(first);
    expect(ledger.all()).toEqual([fraction, late]);
    expect(ledger.get(4024)).toBe(late);
  });
});
