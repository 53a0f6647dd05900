package audittest

import (
	"time"

	"github.com/errata-dev/errata/events"
)

// Configuration is the configuration Reprocessed re-investigates under.
var Configuration = events.AnalysisConfigurationV1{Name: "mini-v2", Model: "gpt-5-mini", ValidatorModel: "gpt-5-mini",
	InvestigatorPrompt: "v1", ValidatorPrompt: "v1", Policy: "strict-v1@a176a28a7d06", AuthorContext: true}

// Reprocessed is a re-investigation of of's post version under
// Configuration (`errata reinvestigate`: source REPROCESS) that supersedes
// of's investigation: the configuration's declaration, then the request
// and the input snapshot. of's events are unchanged.
func Reprocessed(name string, of *Fixture) *Fixture {
	// An hour after of began.
	s := &seq{name: name, at: Start.Add(time.Hour), reg: events.NewCatalogRegistry()}
	configID := events.ConfigurationID(Configuration)
	spec := Configuration
	f := &Fixture{PostID: of.PostID, PostVersionID: of.PostVersionID,
		InvestigationID: events.InvestigationIDFor(of.PostVersionID, configID)}
	f.Control = append(f.Control, s.next(&events.ConfigurationDeclaredV1{ConfigurationID: configID, Configuration: spec,
		Operator: "ops@example", Reason: "a cheaper model with the author-context tool"}, ""))
	r := registration(externalIDOf(of), events.ProvenanceClientFallback)
	req := s.next(&events.InvestigationRequestedV1{InvestigationID: f.InvestigationID, PostID: r.PostID, PostVersionID: r.PostVersionID,
		Platform: r.Platform, ExternalID: r.ExternalID, VersionHash: r.VersionHash, Source: events.RequestSourceReprocess,
		ConfigurationID: configID, Configuration: &spec, Supersedes: of.InvestigationID}, "")
	snap := snapshot(f, r)
	snap.ConfigurationID = configID
	f.Investigation = append(f.Investigation, req, s.next(snap, req.ID))
	return f
}

// externalIDOf is the external id of the post a fixture investigates.
func externalIDOf(f *Fixture) string {
	for _, ev := range f.Posts {
		if p, ok := ev.Payload.(*events.PostVersionRegisteredV1); ok {
			return p.ExternalID
		}
	}
	panic("audittest: fixture without a registration")
}
