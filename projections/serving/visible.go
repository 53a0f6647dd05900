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

// experimentArmRank ranks the arms of the running experiment above every
// promotion (configuration_visibility, migration 0010).
const experimentArmRank = 1 << 62

// visibleInvestigationSQL is a subquery for LATERAL joins: the visible
// investigation (every column of investigations) of the post version the
// outer expression pv names, no row when it has none. An investigation is
// eligible when configuration_visibility has a row for its configuration
// (a promotion) or for its configuration and experiment (an arm of the
// running experiment); one that matches both takes the higher rank.
func visibleInvestigationSQL(pv string) string {
	return `(SELECT vi.* FROM investigations vi
		JOIN configuration_visibility vr ON vr.configuration_id = vi.configuration_id
			AND (vr.experiment_id IS NULL OR vr.experiment_id = vi.experiment_id)
		WHERE vi.post_version_id = ` + pv + `
		ORDER BY vi.status = 'COMPLETE' DESC, vr.rank DESC, vi.id
		LIMIT 1)`
}

// VisibleInvestigationSQL is visibleInvestigationSQL for other readers of
// the serving schema (the selector), so the rule is written once.
func VisibleInvestigationSQL(pv string) string { return visibleInvestigationSQL(pv) }

// priorInvestigationSQL is a subquery for LATERAL joins: the prior result
// of a version (id and configuration_id), the latest complete
// SERVER_VERIFIED visible investigation of another version of the same
// post; post and pv are outer expressions, provenance a parameter. Each
// other version's visible investigation is chosen as visibleInvestigationSQL
// does (DISTINCT ON the version, in the same order), from one scan of the
// post's investigations.
func priorInvestigationSQL(post, pv, provenance string) string {
	return `(SELECT pi.id::text AS id, pi.configuration_id FROM (
			SELECT DISTINCT ON (vi.post_version_id) vi.id, vi.configuration_id, vi.status, vi.provenance, vi.checked_at
			FROM investigations vi
			JOIN configuration_visibility vr ON vr.configuration_id = vi.configuration_id
				AND (vr.experiment_id IS NULL OR vr.experiment_id = vi.experiment_id)
			WHERE vi.post_id = ` + post + ` AND vi.post_version_id <> ` + pv + `
			ORDER BY vi.post_version_id, vi.status = 'COMPLETE' DESC, vr.rank DESC, vi.id) pi
		WHERE pi.status = 'COMPLETE' AND pi.provenance = ` + provenance + `
		ORDER BY pi.checked_at DESC, pi.id DESC LIMIT 1)`
}
