import { type EraDialect, ProtocolAdmission, ProtocolEraGate, type TaskReport } from '@nteract-mcp/core';
import { createTestContainer } from '@nteract-mcp/core/testing';
import { describe, expect, it } from 'vitest';
import { createLegacyTransportPlugin } from './create-legacy-transport-plugin.js';
import { legacyDialect } from './legacy-dialect.js';

/** The dialect of a connection the plugin opened on `initialize`. */
function openedDialect(): EraDialect | undefined {
  const eras = createTestContainer({ plugins: [createLegacyTransportPlugin()] })
    .build()
    .getAll(ProtocolAdmission);
  const gate = new ProtocolEraGate(eras, { name: 'nteract', version: '1', capabilities: {} });
  gate.receive({ method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {} } });
  return gate.connection?.dialect;
}

const report: TaskReport = {
  taskId: 'exec-1',
  status: 'working',
  statusMessage: 'Queued.',
  createdAt: '2026-01-01T00:00:00.000Z',
  lastUpdatedAt: '2026-01-01T00:00:01.000Z',
  pollIntervalMs: 1_000,
};

describe('legacyDialect', () => {
  it('is what a connection opened on initialize speaks', () => {
    expect(openedDialect()).toBe(legacyDialect);
  });

  it('lets the server send requests, and refuses a missing resource -32002', () => {
    expect(legacyDialect.sendsRequests).toBe(true);
    expect(legacyDialect.resourceNotFoundCode).toBe(-32002);
  });

  it('runs a call as a task when it carries a task param (task augmentation), whatever the capabilities', () => {
    const { requested } = legacyDialect.tasks;
    expect(requested({ name: 'execute_cell', task: { ttl: 60_000 } }, undefined)).toBe(true);
    expect(requested({ name: 'execute_cell', task: {} }, undefined)).toBe(true);
    expect(requested({ name: 'execute_cell' }, { extensions: { 'io.modelcontextprotocol/tasks': {} } })).toBe(false);
    expect(requested({ name: 'execute_cell', task: null }, undefined)).toBe(false);
    expect(requested({ name: 'execute_cell', task: 'yes' }, undefined)).toBe(false);
  });

  it('serves tasks/get, tasks/result, tasks/list and tasks/cancel, to any client', () => {
    const { tasks } = legacyDialect;
    expect([...tasks.methods].sort()).toEqual(['tasks/cancel', 'tasks/get', 'tasks/list', 'tasks/result']);
    expect(tasks.refuse).toBeUndefined();
  });

  it('answers a task at once (the client asked for it), as { task }, spelled with ttl and pollInterval', () => {
    const { tasks } = legacyDialect;
    expect(tasks.resultWithinMs).toBeUndefined();
    const task = tasks.spell(report);
    // The wire bytes: the keys in this order.
    expect(JSON.stringify(task)).toBe(
      '{"taskId":"exec-1","status":"working","statusMessage":"Queued.","createdAt":"2026-01-01T00:00:00.000Z","lastUpdatedAt":"2026-01-01T00:00:01.000Z","ttl":null,"pollInterval":1000}',
    );
    expect(tasks.created(task)).toEqual({ task });
  });

  it('leaves the result to tasks/result, tells status changes with notifications/tasks/status, answers a cancel with the task', () => {
    const { tasks } = legacyDialect;
    expect(tasks.carriesResult).toBe(false);
    expect(tasks.statusNotification).toBe('notifications/tasks/status');
    expect(tasks.acknowledgesCancel).toBe(false);
  });
});
