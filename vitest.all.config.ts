import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import type { Reporter } from 'vitest/node';

/**
 * Ends the run with one plain line, `N passed, N failed`, counting every test of every project.
 * A skipped or todo test counts as failed (the house rule is: no skipped test left behind), and so
 * does a test file that failed to load and an error thrown outside any test.
 */
const countLine: Reporter = {
  onTestRunEnd(testModules, unhandledErrors) {
    let passed = 0;
    let failed = unhandledErrors.length;
    const skipped: string[] = [];
    for (const module of testModules) {
      let failedInModule = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failedInModule += 1;
        else skipped.push(`${module.moduleId} > ${test.fullName}`);
      }
      if (failedInModule === 0 && module.state() === 'failed') failedInModule = 1;
      failed += failedInModule;
    }
    if (skipped.length > 0) {
      console.log(`Skipped tests are not allowed; counted as failed:\n  ${skipped.join('\n  ')}`);
      failed += skipped.length;
    }
    if (failed > 0) process.exitCode = 1;
    console.log(`${passed} passed, ${failed} failed`);
  },
};

/**
 * Each workspace package and example as a project of its own (named after its package), taking
 * the options below (`extends`); the real-process tests keep their own config in `test/`.
 */
const workspaceProjects = ['packages', 'examples'].flatMap((parent) =>
  readdirSync(parent)
    .map((entry) => join(parent, entry))
    .filter((root) => existsSync(join(root, 'package.json')))
    .map((root) => ({
      extends: true as const,
      test: { name: (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string }).name, root },
    })),
);

export default defineConfig({
  test: {
    // Every project's tests and hooks wait for their conditions, however loaded the machine; these
    // bounds only keep a hang from hanging the run (vitest's 5 s and 10 s are a wait for time: a
    // spec that imports a whole package, or stops a process, takes longer on a busy machine).
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [...workspaceProjects, 'test'],
    reporters: ['default', countLine],
  },
});
