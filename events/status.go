package events

// Statuses of investigations and verdict analyses. No event carries one:
// every reader derives it from the events of the investigation or analysis
// by the same rules, and shows these strings (the serving projection's
// rows, the job JSON, the GraphQL enums, the audit trail,
// errata_investigations{state}). They are defined here, once, beside the
// events that decide them.
//
// An investigation:
//
//	PENDING     requested (investigation.requested), and again while a
//	            retryable attempt failure waits for its retry, or when an
//	            investigateNow request follows a FAILED one
//	PROCESSING  an attempt has started
//	COMPLETE    completed (investigation.completed); nothing changes it
//	FAILED      failed for good (investigation.failed)
//
// A verdict analysis:
//
//	PENDING   requested, no attempt yet, or its latest attempt failed
//	          retryably
//	RUNNING   its latest attempt started and has not ended
//	COMPLETE  an attempt completed (the completed one is the analysis's)
//	FAILED    its latest attempt failed for good
//
// The worker's run state (consumers/runstate, consumers/analyst) uses
// PENDING, RUNNING, COMPLETE and FAILED in the same sense for its runs,
// plus states only the worker sees (RETRY_WAIT, FINISHING), which are
// defined there.
const (
	StatusPending    = "PENDING"
	StatusProcessing = "PROCESSING"
	StatusRunning    = "RUNNING"
	StatusComplete   = "COMPLETE"
	StatusFailed     = "FAILED"
)
