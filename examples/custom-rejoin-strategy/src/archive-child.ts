/**
 * The example's child bin: the distribution's child composition (`childPlugins()` of the
 * `nteract-mcp` package, a devDependency used only here, for the real-process test) plus the
 * archive plugin. `ACME_ARCHIVE_DIR` and `ACME_ARCHIVE_WORK_DIR` say where the archive and the
 * working copies are. The daemon is started when none answers, as `runt-mcp` does.
 */
import { childPlugins, runtimedEntry } from 'nteract-mcp';
import { runArchiveChild } from './run-archive-child.js';

const archiveDir = process.env.ACME_ARCHIVE_DIR;
const workDir = process.env.ACME_ARCHIVE_WORK_DIR;
if (!archiveDir || !workDir) {
  process.stderr.write('archive-child: set ACME_ARCHIVE_DIR and ACME_ARCHIVE_WORK_DIR\n');
  process.exit(2);
}
process.exitCode = await runArchiveChild({
  basePlugins: childPlugins({
    env: process.env,
    localDaemon: { autoStart: { command: process.execPath, args: [runtimedEntry(), 'start'] } },
  }),
  archive: { archiveDir, workDir },
  env: process.env,
  cwd: process.cwd(),
  version: '0.1.0',
});
