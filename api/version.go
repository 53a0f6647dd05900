package api

import (
	"fmt"
	"strconv"
	"strings"
)

// HeaderExtensionVersion carries the extension's manifest version.
const HeaderExtensionVersion = "x-openerrata-extension-version"

// extensionVersion is a parsed manifest version: 1 to 4 dot-separated
// integers, each at most 65535, compared numerically with missing parts as 0.
type extensionVersion [4]int

func parseExtensionVersion(s string) (extensionVersion, error) {
	var v extensionVersion
	parts := strings.Split(s, ".")
	if s == "" || len(parts) > 4 {
		return v, fmt.Errorf("%q is not 1 to 4 dot-separated integers", s)
	}
	for i, p := range parts {
		if p == "" || len(p) > 5 || strings.TrimLeft(p, "0123456789") != "" {
			return v, fmt.Errorf("%q is not 1 to 4 dot-separated integers", s)
		}
		n, err := strconv.Atoi(p)
		if err != nil || n > 65535 {
			return v, fmt.Errorf("%q has a part above 65535", s)
		}
		v[i] = n
	}
	return v, nil
}

func (v extensionVersion) less(o extensionVersion) bool {
	for i := range v {
		if v[i] != o[i] {
			return v[i] < o[i]
		}
	}
	return false
}

// checkExtensionVersion applies the contract's version gate.
func checkExtensionVersion(header string, minimum extensionVersion, minimumText string) *Error {
	if header == "" {
		return upgradeRequired(minimumText, "", "missing "+HeaderExtensionVersion+" header")
	}
	v, err := parseExtensionVersion(header)
	if err != nil {
		return &Error{Code: CodeBadRequest, Message: "malformed extension version: " + err.Error(),
			Extra: map[string]any{"openerrataCode": "MALFORMED_EXTENSION_VERSION"}}
	}
	if v.less(minimum) {
		return upgradeRequired(minimumText, header, "extension version "+header+" is older than "+minimumText)
	}
	return nil
}

func upgradeRequired(minimum, received, msg string) *Error {
	var got any // null when the header is missing
	if received != "" {
		got = received
	}
	return &Error{Code: CodePreconditionFailed, Message: "upgrade required: " + msg, Extra: map[string]any{
		"openerrataCode":                   "UPGRADE_REQUIRED",
		"minimumSupportedExtensionVersion": minimum,
		"receivedExtensionVersion":         got,
	}}
}
