package api

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/errata-dev/errata/producers/apikeys"
)

// Credential headers (CONTRACT.md, "Headers"). Their values are never
// logged, and neither is the hash of an instance key.
const (
	HeaderAPIKey       = "x-api-key"
	HeaderOpenAIAPIKey = "x-openai-api-key" //nolint:gosec // G101: a header's name, not a credential
)

// maxAPIKeyLength bounds what is hashed and looked up; every issued key is
// far shorter (apikeys.Generate: 47 characters).
const maxAPIKeyLength = 256

// authenticate checks the x-api-key header: it returns the key's sha256 and
// true when it names a non-revoked instance key. A missing, malformed,
// unknown or revoked key is (_, false, nil); only a failed lookup is an error.
func (s *Server) authenticate(c *fiber.Ctx) (keySHA256 string, ok bool, err error) {
	key := strings.TrimSpace(c.Get(HeaderAPIKey))
	if key == "" || len(key) > maxAPIKeyLength {
		return "", false, nil
	}
	sha := apikeys.Hash(key)
	ok, err = s.reader.ActiveAPIKey(c.UserContext(), sha)
	if err != nil || !ok {
		return "", false, err
	}
	return sha, true, nil
}
