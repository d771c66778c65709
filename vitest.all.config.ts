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

export default defineConfig({
  test: {
    projects: ['packages/*', 'examples/*', 'test'],
    reporters: ['default', countLine],
  },
});
