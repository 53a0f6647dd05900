package api

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseExtensionVersion(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want extensionVersion
		ok   bool
	}{
		{"0.2.0", extensionVersion{0, 2, 0, 0}, true},
		{"0.3.3", extensionVersion{0, 3, 3, 0}, true},
		{"1", extensionVersion{1, 0, 0, 0}, true},
		{"1.2.3.4", extensionVersion{1, 2, 3, 4}, true},
		{"65535.65535.65535.65535", extensionVersion{65535, 65535, 65535, 65535}, true},
		{"0", extensionVersion{}, true},
		{"", extensionVersion{}, false},
		{"1.2.3.4.5", extensionVersion{}, false},
		{"a.b", extensionVersion{}, false},
		{"1..2", extensionVersion{}, false},
		{"1.", extensionVersion{}, false},
		{".1", extensionVersion{}, false},
		{"65536", extensionVersion{}, false},
		{"1.65536", extensionVersion{}, false},
		{"-1", extensionVersion{}, false},
		{"+1", extensionVersion{}, false},
		{" 1.2", extensionVersion{}, false},
		{"1.2 ", extensionVersion{}, false},
		{"1.2-beta", extensionVersion{}, false},
		{"v1.2", extensionVersion{}, false},
		{"1.2.3\x00", extensionVersion{}, false},
		{"１.2", extensionVersion{}, false}, // fullwidth digit
		{"999999999999999999999", extensionVersion{}, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseExtensionVersion(tc.in)
			if !tc.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestExtensionVersionOrder(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		less bool
	}{
		{"0.1.9", "0.2.0", true},
		{"0.2", "0.2.0", false},
		{"0.2.0", "0.2", false},
		{"0.2.0", "0.2.0.1", true},
		{"0.10.0", "0.9.9", false},
		{"0.9.9", "0.10.0", true},
		{"1", "0.65535.65535.65535", false},
	} {
		a, err := parseExtensionVersion(tc.a)
		require.NoError(t, err)
		b, err := parseExtensionVersion(tc.b)
		require.NoError(t, err)
		require.Equal(t, tc.less, a.less(b), "%s < %s", tc.a, tc.b)
	}
}

func TestNewRejectsBadMinimumVersion(t *testing.T) {
	_, err := New(Config{MinExtensionVersion: "0.2.x"}, nil, nil, nil, nil, testLogger(t))
	require.ErrorContains(t, err, "minimum extension version")
}

func TestVersionGate(t *testing.T) {
	s, fi := newFakeServer(t)
	body := mustRaw(t, map[string]any{"postVersionId": fixedRegistration.PostVersionID})
	for _, procedure := range []string{"post.registerObservedVersion", "post.recordViewAndGetStatus"} {
		t.Run(procedure, func(t *testing.T) {
			t.Run("missing", func(t *testing.T) {
				r := do(t, s, request{path: "/trpc/" + procedure, body: body, noVersion: true})
				data := expectError(t, r, "PRECONDITION_FAILED", procedure)
				require.Equal(t, "UPGRADE_REQUIRED", data["openerrataCode"])
				require.Equal(t, "0.2.0", data["minimumSupportedExtensionVersion"])
				require.Contains(t, data, "receivedExtensionVersion")
				require.Nil(t, data["receivedExtensionVersion"], "null when the header is missing")
			})
			t.Run("too old", func(t *testing.T) {
				r := do(t, s, request{path: "/trpc/" + procedure, body: body, headers: map[string]string{HeaderExtensionVersion: "0.1.9"}})
				data := expectError(t, r, "PRECONDITION_FAILED", procedure)
				require.Equal(t, "UPGRADE_REQUIRED", data["openerrataCode"])
				require.Equal(t, "0.2.0", data["minimumSupportedExtensionVersion"])
				require.Equal(t, "0.1.9", data["receivedExtensionVersion"])
			})
			t.Run("malformed", func(t *testing.T) {
				r := do(t, s, request{path: "/trpc/" + procedure, body: body, headers: map[string]string{HeaderExtensionVersion: "x.y"}})
				data := expectError(t, r, "BAD_REQUEST", procedure)
				require.Equal(t, "MALFORMED_EXTENSION_VERSION", data["openerrataCode"])
			})
			for _, ok := range []string{"0.2.0", "0.2", "0.3.3", "1.0.0.1"} {
				t.Run("accepts "+ok, func(t *testing.T) {
					r := do(t, s, request{path: "/trpc/" + procedure, body: body, headers: map[string]string{HeaderExtensionVersion: ok}})
					// Past the gate: the procedure itself answers (the
					// register body here is not a valid registration).
					if procedure == "post.recordViewAndGetStatus" {
						resultOf(t, r)
					} else {
						expectError(t, r, "BAD_REQUEST", procedure)
					}
				})
			}
		})
	}
	// Rejected calls never reached the ingest service: only the four accepted
	// recordViewAndGetStatus calls recorded a view.
	registers, views := fi.calls()
	require.Equal(t, 0, registers)
	require.Equal(t, 4, views)
}
