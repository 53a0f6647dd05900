package audit

import (
	"encoding/json"
	"fmt"
)

// Public returns the trail as the public API publishes it. User OpenAI keys
// are never in any event, so no trail holds one; Public further leaves out
// what identifies callers or exposes the deployment:
//
//   - the exact request and response bodies of every exchange (raw_request,
//     raw_response) and the provider's request ids: the normalized output
//     (text, tool calls with their arguments, web searches, citations,
//     reasoning summaries), the tool results and the token usage stay;
//   - requester_key, the keyed hash of an investigateNow caller, which
//     would link one caller's requests across investigations (the source,
//     SELECTOR or INVESTIGATE_NOW, stays);
//   - the key-ring id of an attached user key (that a user key was
//     attached, its expiry and credential USER stay);
//   - worker instance names, blob-store keys of images (their sha256
//     stays, so anyone can check an image) and correlation/causation ids
//     (API request ids);
//   - the free text of failures, which can name the deployment's network
//     (the DNS resolver's address, refused private addresses, internal
//     hosts of the model provider, the search provider or the stores):
//     image skip reasons and the server's source fetch error become public
//     categories (blocked_address, dns_failure, too_large, timeout, …;
//     PublicImageReason, PublicSourceFetchError), the web_search tool's
//     errors "search failed: <category>", and the messages of exchange
//     errors, attempt failures and investigation failures the public
//     sentence of their kind (PublicFailureMessage). Class, kind, HTTP
//     status and provider code stay;
//   - in evidence assessments, the errors of search queries, which quote
//     the search provider's (PublicQueryError), and stance notes, which
//     quote the model's answers and refusals (PublicStanceNote): both
//     become categories; the number of results and the neutral stance stay.
//
// Everything else is published: the post version and its hashes, the exact
// input text, prompts (name, version, sha256 and the rendered
// instructions), tools, models, every claim submitted with its disposition,
// every validator verdict with its reason, every evidence assessment (its
// sources with tier and stance, scores, versions, published or withheld and
// why), failures and the result.
func (t *Trail) Public() (*Trail, error) {
	raw, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("copy trail: %w", err)
	}
	var p Trail
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("copy trail: %w", err)
	}
	pub := func(s *Step) {
		if s != nil {
			s.CorrelationID, s.CausationID = "", ""
		}
	}
	pubExchange := func(x *Exchange) {
		pub(&x.Step)
		x.RawRequest, x.RawResponse, x.RequestID = "", "", ""
		for i := range x.ToolResults {
			x.ToolResults[i].Output = publicToolOutput(x.ToolResults[i].Name, x.ToolResults[i].Output)
		}
		if x.Error != nil {
			x.Error.Message = PublicFailureMessage(x.Error.Kind)
		}
	}
	if pv := p.PostVersion; pv != nil {
		pv.ServerFetchError = PublicSourceFetchError(pv.ServerFetchError)
		pub(&pv.FirstRegistered)
		pub(pv.ServerVerified)
		for i := range pv.Anomalies {
			pub(&pv.Anomalies[i].Step)
		}
	}
	for i := range p.Requests {
		pub(&p.Requests[i].Step)
		p.Requests[i].RequesterKey = ""
	}
	for i := range p.UserKeys {
		pub(&p.UserKeys[i].Step)
		p.UserKeys[i].KeyRingID = ""
	}
	if in := p.Input; in != nil {
		pub(&in.Step)
		for i := range in.Images {
			in.Images[i].BlobKey = ""
		}
		for i := range in.SkippedImages {
			in.SkippedImages[i].Reason = PublicImageReason(in.SkippedImages[i].Reason)
		}
	}
	for _, a := range p.Attempts {
		pub(a.Started)
		a.Worker = ""
		for _, x := range a.Exchanges {
			pubExchange(x)
		}
		for _, s := range a.Submissions {
			pub(&s.Step)
			for _, x := range s.Exchanges {
				pubExchange(x)
			}
			if s.Validation != nil {
				pub(&s.Validation.Step)
			}
			for _, x := range s.AssessorExchanges {
				pubExchange(x)
			}
			if as := s.Assessment; as != nil {
				pub(&as.Step)
				for i := range as.Queries {
					as.Queries[i].Error = PublicQueryError(as.Queries[i].Error)
				}
				for i := range as.Sources {
					as.Sources[i].StanceNote = PublicStanceNote(as.Sources[i].StanceNote)
				}
			}
		}
		for i := range a.Retains {
			pub(&a.Retains[i].Step)
		}
		if a.StageOne != nil {
			pub(&a.StageOne.Step)
		}
		if a.Failure != nil {
			pub(&a.Failure.Step)
			a.Failure.Message = PublicFailureMessage(a.Failure.Kind)
		}
	}
	if p.Result != nil {
		pub(&p.Result.Step)
	}
	for i := range p.Failures {
		pub(&p.Failures[i].Step)
		p.Failures[i].Reason = PublicFailureReason(p.Failures[i].Reason)
	}
	return &p, nil
}
