import { describe, expect, it } from 'vitest';
import { RejoinTargetTracker } from './rejoin-target-tracker.js';

const uuid = '0b9f2c44-5d1e-4a7b-9c3d-2e8f6a1b7c90';

describe(RejoinTargetTracker, () => {
  it('knows nothing until a child reports', () => {
    const tracker = new RejoinTargetTracker();
    expect(tracker.current()).toBeUndefined();
    expect(tracker.hasReport()).toBe(false);
  });

  it("stores the reported target, replaces it with each report, and clears it on the child's null", () => {
    const tracker = new RejoinTargetTracker();
    tracker.observeSessionReport({ target: '/w/a.ipynb', notebookId: uuid });
    expect(tracker.current()).toBe('/w/a.ipynb');
    tracker.observeSessionReport({ target: uuid });
    expect(tracker.current()).toBe(uuid);
    tracker.observeSessionReport({ target: null });
    expect(tracker.current()).toBeUndefined();
    expect(tracker.hasReport()).toBe(true);
  });

  it("keeps where the child's change notes stood on its notebook, for the next child", () => {
    const tracker = new RejoinTargetTracker();
    tracker.observeSessionReport({ target: '/w/a.ipynb', notebookId: uuid });
    expect(tracker.changeCursor()).toBeUndefined();
    tracker.observeSessionReport({ target: '/w/a.ipynb', notebookId: uuid, changeCursor: 'ab12cd.17' });
    expect(tracker.changeCursor()).toBe(`${uuid} ab12cd.17`);
    // A report without one (a call before the notes started) keeps the last known.
    tracker.observeSessionReport({ target: '/w/a.ipynb', notebookId: uuid });
    expect(tracker.changeCursor()).toBe(`${uuid} ab12cd.17`);
  });

  it('drops credentials from a reported hosted URL and keeps everything else of it', () => {
    const tracker = new RejoinTargetTracker();
    tracker.observeSessionReport({ target: 'https://user:pw@hub.example/user/a/lab/tree/x.ipynb?token=s3cret&v=2' });
    expect(tracker.current()).toBe('https://hub.example/user/a/lab/tree/x.ipynb?v=2');
  });

  it('keeps a local target as the child stated it, trimmed', () => {
    const tracker = new RejoinTargetTracker();
    tracker.observeSessionReport({ target: '  /w/with space.ipynb ' });
    expect(tracker.current()).toBe('/w/with space.ipynb');
  });

  it('takes a report the child repeats again after another one came in between', () => {
    const tracker = new RejoinTargetTracker();
    const first = { target: '/w/a.ipynb' };
    tracker.observeSessionReport(first);
    tracker.observeSessionReport(first);
    tracker.observeSessionReport({ target: null });
    expect(tracker.current()).toBeUndefined();
    tracker.observeSessionReport(first);
    expect(tracker.current()).toBe('/w/a.ipynb');
  });
});
