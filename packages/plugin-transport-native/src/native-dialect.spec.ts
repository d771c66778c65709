import {
  type EraDialect,
  ProtocolAdmission,
  ProtocolEraGate,
  type TaskReport,
  tasksExtension,
} from '@nteract-mcp/core';
import { createTestContainer } from '@nteract-mcp/core/testing';
import { describe, expect, it } from 'vitest';
import { createNativeTransportPlugin } from './create-native-transport-plugin.js';
import { nativeDialect } from './native-dialect.js';
import { envelopeKeys } from './native-envelope.js';

/** The dialect of a connection the plugin opened on an enveloped request. */
function openedDialect(): EraDialect | undefined {
  const eras = createTestContainer({ plugins: [createNativeTransportPlugin()] })
    .build()
    .getAll(ProtocolAdmission);
  const gate = new ProtocolEraGate(eras, { name: 'nteract', version: '1', capabilities: {} });
  const envelope = { [envelopeKeys.protocolVersion]: '2026-07-28', [envelopeKeys.clientCapabilities]: {} };
  gate.receive({ method: 'tools/list', params: { _meta: envelope } });
  return gate.connection?.dialect;
}

const withTasks = { extensions: { [tasksExtension]: {} } };

const report: TaskReport = {
  taskId: 'exec-1',
  status: 'working',
  statusMessage: 'Queued.',
  createdAt: '2026-01-01T00:00:00.000Z',
  lastUpdatedAt: '2026-01-01T00:00:01.000Z',
  pollIntervalMs: 1_000,
};

describe('nativeDialect', () => {
  it('is what a connection opened on an enveloped request speaks', () => {
    expect(openedDialect()).toBe(nativeDialect);
  });

  it('sends the client no requests, and refuses a missing resource -32602 (SEP-2164)', () => {
    expect(nativeDialect.sendsRequests).toBe(false);
    expect(nativeDialect.resourceNotFoundCode).toBe(-32602);
  });

  it("runs a call as a task when the request's client capabilities declare the tasks extension, not for a task param", () => {
    const { requested } = nativeDialect.tasks;
    expect(requested({ name: 'execute_cell' }, withTasks)).toBe(true);
    expect(requested({ name: 'execute_cell', task: { ttl: 1 } }, {})).toBe(false);
    expect(requested({ name: 'execute_cell', task: { ttl: 1 } }, undefined)).toBe(false);
    expect(requested({ name: 'execute_cell' }, { extensions: { 'other/extension': {} } })).toBe(false);
  });

  it('serves tasks/get, tasks/update and tasks/cancel, each only to a request declaring the extension (-32021)', () => {
    const { tasks } = nativeDialect;
    expect([...tasks.methods].sort()).toEqual(['tasks/cancel', 'tasks/get', 'tasks/update']);
    expect(tasks.refuse?.('tasks/get', withTasks)).toBeUndefined();
    expect(tasks.refuse?.('tasks/update', { elicitation: {} })).toEqual({
      kind: 'reject',
      code: -32021,
      message: `Missing required client capability: tasks/update needs the ${tasksExtension} extension in the request's client capabilities.`,
      data: { requiredCapabilities: { extensions: { [tasksExtension]: {} } } },
    });
    expect(tasks.refuse?.('tasks/cancel', undefined)).toMatchObject({ code: -32021 });
  });

  it("decides itself: a run ending within 2 s is answered with its result, a longer one with the task (resultType 'task')", () => {
    const { tasks } = nativeDialect;
    expect(tasks.resultWithinMs).toBe(2_000);
    const task = tasks.spell(report);
    // The wire bytes: the keys in this order.
    expect(JSON.stringify(task)).toBe(
      '{"taskId":"exec-1","status":"working","statusMessage":"Queued.","createdAt":"2026-01-01T00:00:00.000Z","lastUpdatedAt":"2026-01-01T00:00:01.000Z","ttlMs":null,"pollIntervalMs":1000}',
    );
    expect(JSON.stringify(tasks.created(task))).toBe(JSON.stringify({ ...task, resultType: 'task' }));
  });

  it('lets a task carry its result, tells status changes with notifications/tasks, acknowledges a cancel', () => {
    const { tasks } = nativeDialect;
    expect(tasks.carriesResult).toBe(true);
    expect(tasks.statusNotification).toBe('notifications/tasks');
    expect(tasks.acknowledgesCancel).toBe(true);
  });
});
