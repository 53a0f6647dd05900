package serving

// The visible investigation of a post version is the one the extension
// sees. It depends on the promotions and on the running experiment, so it
// is chosen when reading (a promotion changes what every version shows
// without rewriting a row): among the version's ELIGIBLE investigations
// (their configuration was ever promoted, the default always; or they are
// an arm of the running experiment), a COMPLETE one first, then an arm of
// the running experiment, then the higher promotion rank. Investigations
// that are not eligible (a re-processing under a configuration not yet
// promoted) stay in the history only.

// runningExperimentSQL is the id of the running experiment, NULL when none
// runs (at most one does: experiments_running_idx).
const runningExperimentSQL = `(SELECT e.id FROM experiments e WHERE e.stopped_at IS NULL)`

// visibleInvestigationSQL is a subquery for LATERAL joins: the visible
// investigation (every column of investigations) of the post version the
// outer expression pv names, no row when it has none.
func visibleInvestigationSQL(pv string) string {
	return `(SELECT vi.* FROM investigations vi
		LEFT JOIN analysis_configurations vc ON vc.id = vi.configuration_id
		WHERE vi.post_version_id = ` + pv + `
			AND (vc.promotion_rank IS NOT NULL OR vi.experiment_id = ` + runningExperimentSQL + `)
		ORDER BY vi.status = 'COMPLETE' DESC, (vi.experiment_id = ` + runningExperimentSQL + `) IS TRUE DESC,
			vc.promotion_rank DESC NULLS LAST, vi.id
		LIMIT 1)`
}

// VisibleInvestigationSQL is visibleInvestigationSQL for other readers of
// the serving schema (the selector), so the rule is written once.
func VisibleInvestigationSQL(pv string) string { return visibleInvestigationSQL(pv) }

// priorInvestigationSQL is a subquery for LATERAL joins: the prior result
// of a version (id and configuration_id), the latest complete
// SERVER_VERIFIED visible investigation of another version of the same
// post; post and pv are outer expressions, provenance a parameter.
func priorInvestigationSQL(post, pv, provenance string) string {
	return `(SELECT pi.id::text AS id, pi.configuration_id FROM post_versions opv
		CROSS JOIN LATERAL ` + visibleInvestigationSQL("opv.id") + ` pi
		WHERE opv.post_id = ` + post + ` AND opv.id <> ` + pv + ` AND pi.status = 'COMPLETE' AND pi.provenance = ` + provenance + `
		ORDER BY pi.checked_at DESC, pi.id DESC LIMIT 1)`
}
