import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    environment: "node",
    // The saved Wikipedia pages are megabytes of HTML; jsdom needs a while.
    testTimeout: 60_000,
    watch: false,
  },
});
