package pgproj

// FrameworkTables lets the upgrade test rebuild what the runner before
// checksums left behind.
const FrameworkTables = frameworkTables
