package analytics

// MigrateFiles and SplitStatements let the migration tests run files of
// their own and rebuild what the runner before internal/migrate left.
var (
	MigrateFiles    = migrateFiles
	SplitStatements = splitStatements
)
