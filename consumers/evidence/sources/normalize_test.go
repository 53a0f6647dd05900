package sources

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNormalize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"https://www.bls.gov/cpi/", "https://bls.gov/cpi"},
		{"HTTPS://WWW.BLS.GOV", "https://bls.gov/"},
		{"  https://example.com/a  \n", "https://example.com/a"},
		// fragment and tracking parameters go; the rest is sorted by name,
		// repeated names keep their order
		{"https://example.com/p?utm_source=x&b=2&UTM_Medium=y&a=1&fbclid=z&gclid=g&ref=r&ref_src=s&a=0#top", "https://example.com/p?a=1&a=0&b=2"},
		{"https://x.com/a/status/1?s=20&ref_src=twsrc%5Etfw", "https://x.com/a/status/1?s=20"},
		{"https://example.com/?utm_source=x", "https://example.com/"},
		{"https://example.com?", "https://example.com/"},
		{"https://example.com/?flag&a=", "https://example.com/?a=&flag"},
		{"https://example.com/?q=a b&r=%2F", "https://example.com/?q=a+b&r=%2F"},
		{"https://example.com/search?q=caf%C3%A9", "https://example.com/search?q=caf%C3%A9"},
		// default ports go, others stay
		{"http://example.com:80/a", "http://example.com/a"},
		{"https://example.com:443/a", "https://example.com/a"},
		{"http://example.com:443/a", "http://example.com:443/a"},
		{"https://example.com:0443/a", "https://example.com/a"},
		{"https://example.com:8443/a", "https://example.com:8443/a"},
		{"http://example.com:/a", "http://example.com/a"},
		// trailing-slash rule and dot segments
		{"https://example.com", "https://example.com/"},
		{"https://example.com/a/b/", "https://example.com/a/b"},
		{"https://example.com/a//", "https://example.com/a"},
		{"https://example.com/a/./b/../c", "https://example.com/a/c"},
		{"https://example.com/../../a", "https://example.com/a"},
		{"https://example.com/a/b/..", "https://example.com/a"},
		{"https://example.com/a%2Fb/", "https://example.com/a%2Fb"},
		{"https://example.com/a b", "https://example.com/a%20b"},
		// hosts: IDN to punycode, case and width folding, one trailing dot
		{"https://bücher.de/x", "https://xn--bcher-kva.de/x"},
		{"https://XN--BCHER-KVA.de/x", "https://xn--bcher-kva.de/x"},
		{"https://ＥＸＡＭＰＬＥ.com/", "https://example.com/"},
		{"https://example。com/", "https://example.com/"},
		{"https://example.com./a", "https://example.com/a"},
		{"https://b%C3%BCcher.de/", "https://xn--bcher-kva.de/"},
		{"https://r3---sn-abc.googlevideo.com/v", "https://r3---sn-abc.googlevideo.com/v"},
		// www. goes unless what remains is a public suffix
		{"https://www.gov.uk/a", "https://www.gov.uk/a"},
		{"https://www.co.uk/", "https://www.co.uk/"},
		{"https://www.foo.blogspot.com/", "https://foo.blogspot.com/"},
		{"https://www.www.example.com/", "https://example.com/"},
		{"https://wwwexample.com/", "https://wwwexample.com/"},
		{"https://blogspot.com/", "https://blogspot.com/"},
	} {
		got, err := Normalize(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
		again, err := Normalize(got)
		require.NoError(t, err, got)
		require.Equal(t, got, again, "Normalize is idempotent on %q", tc.in)
	}
}

func TestNormalizeRejects(t *testing.T) {
	t.Parallel()
	long := "https://example.com/" + strings.Repeat("a", 10*1024)
	for _, tc := range []struct {
		in   string
		want Reason
	}{
		{"", ReasonNotAbsolute},
		{"example.com/a", ReasonNotAbsolute},
		{"//example.com/a", ReasonNotAbsolute},
		{"/a/b", ReasonNotAbsolute},
		{"javascript:alert(1)", ReasonScheme},
		{"JavaScript://example.com/%0aalert(1)", ReasonScheme},
		{"data:text/html;base64,PHNjcmlwdD4=", ReasonScheme},
		{"ftp://example.com/f", ReasonScheme},
		{"mailto:a@example.com", ReasonScheme},
		{"file:///etc/passwd", ReasonScheme},
		{"http:example.com", ReasonNoHost},
		{"http:///path", ReasonNoHost},
		{"https://:443/", ReasonNoHost},
		{"https://user@example.com/", ReasonUserinfo},
		{"https://user:pw@example.com/", ReasonUserinfo},
		{"https://good.com@evil.com/", ReasonUserinfo},
		{"https://example.com/\x00", ReasonControlChar},
		{"https://exa\x00mple.com/", ReasonControlChar},
		{"https://example.com/a\tb", ReasonControlChar},
		{"https://example.com/\x7f", ReasonControlChar},
		{"https://exa%00mple.com/", ReasonUnparseable},
		{"https://%65xample.com/", ReasonUnparseable},
		{"https://exa%C2%85mple.com/", ReasonBadHost},
		{long, ReasonTooLong},
		{"https://127.0.0.1/", ReasonIPLiteral},
		{"https://127.0.0.1./", ReasonIPLiteral},
		{"https://[::1]/", ReasonIPLiteral},
		{"https://[2001:db8::1]:8443/", ReasonIPLiteral},
		{"https://2130706433/", ReasonIPLiteral},
		{"https://0x7f.1/", ReasonIPLiteral},
		{"https://127.1/", ReasonIPLiteral},
		{"https://１２７.０.０.１/", ReasonIPLiteral},
		{"https://localhost/", ReasonNoPublicSuffix},
		{"https://localhost./", ReasonNoPublicSuffix},
		{"https://printer.local/", ReasonNoPublicSuffix},
		{"https://db.internal/", ReasonNoPublicSuffix},
		{"https://intranet/", ReasonNoPublicSuffix},
		{"https://co.uk/", ReasonPublicSuffix},
		{"https://com/", ReasonPublicSuffix},
		{"https://example.com../", ReasonBadHost},
		{"https://.example.com/", ReasonBadHost},
		{"https://a..example.com/", ReasonBadHost},
		{"https://a。。com/", ReasonBadHost},
		{"https://ex_ample.com/", ReasonBadHost},
		{"https://" + strings.Repeat("a", 64) + ".com/", ReasonBadHost},
		{"https://" + strings.Repeat("abcdefghi.", 26) + "com/", ReasonBadHost},
		{"https://\u202eevil.com/", ReasonBadHost},
		{"https://exa mple.com/", ReasonUnparseable},
		{"https://example.com/a%zz", ReasonUnparseable},
		{"https://example.com:99999/", ReasonBadPort},
		{"https://example.com:0/", ReasonBadPort},
		{"https://example.com/?a=%zz", ReasonBadQuery},
		{"https://example.com/?%zz=1", ReasonBadQuery},
	} {
		got, err := Normalize(tc.in)
		require.Error(t, err, "%.80q normalized to %q", tc.in, got)
		var ue *URLError
		require.True(t, errors.As(err, &ue), "%.80q: %v", tc.in, err)
		require.Equal(t, tc.want, ue.Reason, "%.80q: %v", tc.in, err)
		require.Less(t, len(err.Error()), 200, "the error never repeats a long URL")
		require.NotContains(t, err.Error(), "\x00")
	}
}

func TestNormalizeLengthLimit(t *testing.T) {
	t.Parallel()
	prefix := "https://example.com/"
	exact := prefix + strings.Repeat("a", MaxURLBytes-len(prefix))
	got, err := Normalize(exact)
	require.NoError(t, err)
	require.Equal(t, exact, got)
	_, err = Normalize(exact + "a")
	var ue *URLError
	require.ErrorAs(t, err, &ue)
	require.Equal(t, ReasonTooLong, ue.Reason)
	require.Equal(t, "url rejected: too_long: 4097 bytes, at most 4096", err.Error())
}

// FuzzNormalize checks what holds for every input: no panic, and an
// accepted URL is printable ASCII, is accepted again unchanged, and
// resolves.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		"https://www.bls.gov/cpi/?utm_source=x#a", "http://bücher.de./a/../b", "https://foo.blogspot.com",
		"javascript:alert(1)", "http://[::1]:80/", "https://a@b.com", "https://example.com/?a&b=%20&a=1",
		"http://0x7f.1", "https://www.gov.uk", "https://example.com:8080/a//b/./", "http://xn--.com",
	} {
		f.Add(s)
	}
	reg := Default()
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := Normalize(raw)
		if err != nil {
			var ue *URLError
			if !errors.As(err, &ue) || ue.Reason == "" {
				t.Fatalf("%.200q: error without a reason: %.200v", raw, err)
			}
			return
		}
		for i := 0; i < len(got); i++ {
			if got[i] <= 0x20 || got[i] >= 0x7f {
				t.Fatalf("%.200q normalized to %.200q with byte 0x%02x", raw, got, got[i])
			}
		}
		again, err := Normalize(got)
		if err != nil || again != got {
			t.Fatalf("%.200q -> %.200q -> %.200q, %.200v", raw, got, again, err)
		}
		m, err := reg.Lookup(got)
		if err != nil || m.URL != got || m.Tier < 1 || m.Tier > 5 || m.Rule == "" || !strings.HasSuffix(m.Host, m.Domain) {
			t.Fatalf("lookup %.200q: %+v %.200v", got, m, err)
		}
	})
}
