package ingest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/testkit/fixtures"
	"github.com/errata-dev/errata/producers/ingest"
)

// The registerObservedVersion body OpenErrata's own extension sent for the
// trimmed Einstein page, and the versionHash a conforming server computes
// for it. The extension's tests build the same body from the same page
// (extension/test/register-parity.test.ts), so a page registered through
// either extension lands on this one version.
func TestReferenceClientRegisterBody(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(fixtures.Dir(t), "wikipedia-albert-einstein-trimmed.reference-extension-register.json"))
	require.NoError(t, err)
	var fixture struct {
		ExpectedVersionHash string          `json:"expectedVersionHash"`
		RequestBody         json.RawMessage `json:"requestBody"`
	}
	require.NoError(t, json.Unmarshal(raw, &fixture))
	require.Equal(t, "d513a0e949ec4f4210e8bbfeaecc03472a0178c4485a495be5d0871eba9b1877", fixture.ExpectedVersionHash)

	in, err := ingest.ParseRegisterInput(fixture.RequestBody)
	require.NoError(t, err)
	p, err := ingest.BuildRegistration(in)
	require.NoError(t, err)
	require.Equal(t, fixture.ExpectedVersionHash, p.VersionHash)
	require.Equal(t, "en:736", p.ExternalID)
	require.Equal(t, events.ProvenanceClientFallback, p.Provenance)
	require.Len(t, p.ImageOccurrences, 22)
	captions := 0
	for _, o := range p.ImageOccurrences {
		if o.CaptionText != "" {
			captions++
		}
	}
	require.Equal(t, 18, captions)
}
