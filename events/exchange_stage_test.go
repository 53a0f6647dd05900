package events_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
)

// Each exchange stage names its claim exactly when it judges one.
func TestExchangeStagesAndTheirClaim(t *testing.T) {
	postID := events.PostID(events.PlatformLessWrong, "x")
	ref := events.AttemptRef{InvestigationID: events.InvestigationID(events.PostVersionID(postID, hashOf("v"))), Series: 1, Attempt: 1}
	sub := events.SubmissionID(ref, 0)
	exchange := func(stage, submissionID string) *events.InvestigationExchangeRecordedV1 {
		return &events.InvestigationExchangeRecordedV1{AttemptRef: ref, Stage: stage, SubmissionID: submissionID, Round: 1,
			Prompt: events.PromptRefV1{Name: "stance", Version: "v1", SHA256: hashOf("x")}, Provider: "openai-responses", Model: "gpt-5-mini",
			RawRequest: json.RawMessage(`{}`), ToolResults: []events.ToolResultV1{}}
	}
	tests := []struct {
		stage, submissionID, err string
	}{
		{stage: events.StageInvestigator},
		{stage: events.StageInvestigator, submissionID: sub, err: "an investigator exchange has no submission_id"},
		{stage: events.StageValidator, submissionID: sub},
		{stage: events.StageValidator, err: "a validator exchange needs a submission_id"},
		{stage: events.StageAssessor, submissionID: sub},
		{stage: events.StageAssessor, err: "an assessor exchange needs a submission_id"},
		{stage: events.StageAssessor, submissionID: "not-a-uuid", err: "an assessor exchange needs a submission_id"},
		{stage: "JUDGE", submissionID: sub, err: `stage "JUDGE" is unknown`},
	}
	for _, tt := range tests {
		t.Run(tt.stage+"/"+tt.submissionID, func(t *testing.T) {
			err := exchange(tt.stage, tt.submissionID).Validate()
			if tt.err == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, tt.err)
		})
	}
}
