package prompts

import "encoding/json"

// Verdict is the validator's answer about one candidate claim.
type Verdict struct {
	Approved bool   `json:"approved"`
	Reason   string `json:"reason"`
}

// VerdictSchemaName names VerdictSchema in structured-output requests.
const VerdictSchemaName = "verdict"

// VerdictSchema is the strict JSON schema of Verdict, usable as an OpenAI
// structured-output format: both fields required, nothing else allowed.
var VerdictSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "approved": {
      "type": "boolean",
      "description": "true only when the claim meets every point of the bar for approval"
    },
    "reason": {
      "type": "string",
      "description": "one or two sentences naming the decisive point"
    }
  },
  "required": ["approved", "reason"],
  "additionalProperties": false
}`)
