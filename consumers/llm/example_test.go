package llm_test

import (
	"context"
	"fmt"
	"time"

	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/llm/tools"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testkit/fakeopenai"
)

// The orchestrator drives the rounds: create a turn, execute the tool
// calls, continue with their outputs until the model answers without
// tools; retry transient failures itself.
func Example() {
	f := fakeopenai.New()
	defer f.Close()
	f.Enqueue(fakeopenai.Responses,
		fakeopenai.RateLimit(time.Second),
		fakeopenai.Reply(fakeopenai.Response{Output: []any{
			fakeopenai.FunctionCall("call_1", tools.RetainCorrectionName, map[string]string{"id": "corr-1"}),
		}}),
		fakeopenai.Reply(fakeopenai.Response{Output: []any{fakeopenai.Message(fakeopenai.Text("No further errors."))}}),
	)

	ctx := context.Background()
	var p llm.Provider = llm.OpenAIResponses{}
	cred := llm.Credentials{BaseURL: f.URL, APIKey: logging.Secret("sk-example-key-not-real-0000000000")}
	req := llm.Request{
		Model:        "gpt-5",
		Instructions: "Check the post; keep prior corrections that still apply.",
		Input:        []llm.Message{llm.UserText("Post text: ...")},
		Tools:        []llm.Tool{tools.SubmitCorrection(), tools.RetainCorrection()},
		WebSearch:    &llm.WebSearch{},
	}

	res, err := p.Create(ctx, cred, req)
	if e, ok := llm.AsError(err); ok && e.Retryable() {
		fmt.Println("attempt 1:", e.Kind, "retry after", e.RetryAfter)
		res, err = p.Create(ctx, cred, req) // the real orchestrator backs off first
	}
	for err == nil && len(res.ToolCalls()) > 0 {
		var outputs []llm.ToolOutput
		for _, call := range res.ToolCalls() {
			keep, derr := tools.DecodeRetain(call.JSON)
			if derr != nil {
				panic(derr)
			}
			fmt.Println("retain", keep.ID)
			outputs = append(outputs, llm.ToolOutput{CallID: call.CallID, Output: `{"ok":true}`})
		}
		res, err = p.Continue(ctx, cred, req, res, outputs)
	}
	if err != nil {
		fmt.Println("failed:", err)
		return
	}
	fmt.Println(res.Text())
	// Output:
	// attempt 1: rate_limited retry after 1s
	// retain corr-1
	// No further errors.
}
