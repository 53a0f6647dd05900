import { defineConfig } from "vitest/config";

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
  },
});
