package events

// Topic is a logical topic name; Topics turns it into the real Kafka name.
type Topic string

// The event topics. Event topics keep data forever (retention.ms=-1).
const (
	// TopicPosts carries everything that happens to a post: version
	// registrations and views. Keyed by post id, so one post's history is
	// totally ordered and projections see a version before its views.
	TopicPosts Topic = "posts"
	// TopicDeadLetter receives records a consumer could not process, with
	// headers naming the source position and the error. Keyed by source key.
	TopicDeadLetter Topic = "dead-letter"
)

// Topics maps logical topics to Kafka topic names under a prefix, so tests
// and parallel deployments can share one cluster.
type Topics struct {
	Prefix string
}

// Name returns the Kafka topic name of a logical topic.
func (t Topics) Name(topic Topic) string { return t.Prefix + string(topic) }

// Names lists the Kafka names of the topics of every type in reg, then the
// dead-letter topic: the topics `errata topics` creates.
func (t Topics) Names(reg *Registry) []string {
	var names []string
	for _, tp := range reg.Topics() {
		names = append(names, t.Name(tp))
	}
	return append(names, t.Name(TopicDeadLetter))
}
