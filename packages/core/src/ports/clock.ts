import type { Clock as ClockContract } from '@nteract-mcp/foundation';
import { defineToken } from '../di/define-token.js';

export type { Timer } from '@nteract-mcp/foundation';

/**
 * Time as core sees it: every delay, deadline and retry schedule goes through this port, so tests
 * drive time with `ManualClock` instead of sleeping. The contract is `@nteract-mcp/foundation`'s.
 */
export type Clock = ClockContract;

export const Clock = defineToken<Clock>('core', 'Clock');
