import { basename } from "node:path";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The suites share one stack and one provider log, so their order matters
 * (the Chromium real-stack suite asks for the first investigation of each
 * page; Firefox then finds it done): always this order, never vitest's
 * duration-based one.
 */
const ORDER = ["fixtures.e2e.ts", "chromium.e2e.ts", "appeals.e2e.ts", "real-stack.e2e.ts", "social.e2e.ts", "firefox.e2e.ts"];

class FixedOrder extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification): number => {
      const i = ORDER.indexOf(basename(f.moduleId));
      return i < 0 ? ORDER.length : i;
    };
    return [...files].sort((a, b) => rank(a) - rank(b));
  }
}

// End-to-end tests in real browsers (npm run e2e, through scripts/e2e.mjs,
// which installs the browsers and builds the extension first). One file at a
// time: each drives a whole browser, and the machine has two cores.
export default defineConfig({
  test: {
    include: ["test/e2e/**/*.e2e.ts"],
    environment: "node",
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    watch: false,
    sequence: { sequencer: FixedOrder },
  },
});
