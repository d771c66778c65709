/** The section of `session_status` the local daemon's backends answer in (with core's `readDaemonStatus`). */
export const daemonStatusSection = 'daemon';
