package events

// Catalog returns the definitions of every event type Errata writes. It is the
// single place a new event type is added (and documented in README.md).
func Catalog() []Definition {
	return []Definition{
		{
			Type:      TypePostVersionRegisteredV1,
			Topic:     TopicPosts,
			Aggregate: "post",
			New:       func() Payload { return &PostVersionRegisteredV1{} },
			Subject: func(p Payload) string {
				if v, ok := p.(*PostVersionRegisteredV1); ok {
					return v.PostID
				}
				return p.(PostVersionRegisteredV1).PostID
			},
		},
		{
			Type:      TypePostViewRecordedV1,
			Topic:     TopicPosts,
			Aggregate: "post",
			New:       func() Payload { return &PostViewRecordedV1{} },
			Subject: func(p Payload) string {
				if v, ok := p.(*PostViewRecordedV1); ok {
					return v.PostID
				}
				return p.(PostViewRecordedV1).PostID
			},
		},
	}
}

// NewCatalogRegistry builds the registry of Catalog.
func NewCatalogRegistry() *Registry {
	r, err := NewRegistry(Catalog()...)
	if err != nil {
		// Catalog is static; an error here is a programming error caught by tests.
		panic(err)
	}
	return r
}
