package main

import "github.com/errata-dev/errata/internal/ops"

// projectorGroups are the projectors `errata worker` runs, as Kafka knows
// them: consumer group and topics (those a replay of each reads).
func projectorGroups(e *env) []ops.ProjectorGroup {
	var out []ops.ProjectorGroup
	for _, name := range projectorNames() {
		topics := servingTopics(e)
		if rb, ok := rebuildables[name]; ok {
			topics = rb.topics(e)
		}
		out = append(out, ops.ProjectorGroup{Name: name, Group: e.cfg.TopicPrefix + "projector." + name, Topics: topics})
	}
	return out
}
