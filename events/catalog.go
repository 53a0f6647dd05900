package events

// Catalog returns the definitions of every event type Errata writes. It is the
// single place a new event type is added (and documented in README.md).
func Catalog() []Definition {
	return []Definition{
		{
			Type: TypePostVersionRegisteredV1, Topic: TopicPosts, Aggregate: "post",
			New:     func() Payload { return &PostVersionRegisteredV1{} },
			Subject: subjectOf(func(p *PostVersionRegisteredV1) string { return p.PostID }),
		},
		{
			Type: TypePostViewRecordedV1, Topic: TopicPosts, Aggregate: "post",
			New:      func() Payload { return &PostViewRecordedV1{} },
			Subject:  subjectOf(func(p *PostViewRecordedV1) string { return p.PostID }),
			UpcastTo: TypePostViewRecordedV2,
			Upcast:   upcastPostViewRecordedV1,
		},
		{
			Type: TypePostViewRecordedV2, Topic: TopicPosts, Aggregate: "post",
			New:     func() Payload { return &PostViewRecordedV2{} },
			Subject: subjectOf(func(p *PostViewRecordedV2) string { return p.PostID }),
		},
		{
			Type: TypePostIntegrityAnomalyRecordedV1, Topic: TopicPosts, Aggregate: "post",
			New:     func() Payload { return &PostIntegrityAnomalyRecordedV1{} },
			Subject: subjectOf(func(p *PostIntegrityAnomalyRecordedV1) string { return p.PostID }),
		},
		{
			Type: TypeAPIKeyAddedV1, Topic: TopicAPIKeys, Aggregate: "apikey",
			New:     func() Payload { return &APIKeyAddedV1{} },
			Subject: subjectOf(func(p *APIKeyAddedV1) string { return p.KeyID }),
		},
		{
			Type: TypeAPIKeyRevokedV1, Topic: TopicAPIKeys, Aggregate: "apikey",
			New:     func() Payload { return &APIKeyRevokedV1{} },
			Subject: subjectOf(func(p *APIKeyRevokedV1) string { return p.KeyID }),
		},
		{
			Type: TypeInvestigationRequestedV1, Topic: TopicInvestigations, Aggregate: "investigation",
			New:     func() Payload { return &InvestigationRequestedV1{} },
			Subject: subjectOf(func(p *InvestigationRequestedV1) string { return p.InvestigationID }),
		},
		{
			Type: TypeInvestigationCompletedV1, Topic: TopicInvestigations, Aggregate: "investigation",
			New:     func() Payload { return &InvestigationCompletedV1{} },
			Subject: subjectOf(func(p *InvestigationCompletedV1) string { return p.InvestigationID }),
		},
		{
			Type: TypeInvestigationFailedV1, Topic: TopicInvestigations, Aggregate: "investigation",
			New:     func() Payload { return &InvestigationFailedV1{} },
			Subject: subjectOf(func(p *InvestigationFailedV1) string { return p.InvestigationID }),
		},
		{
			Type: TypeInvestigationInputSnapshottedV1, Topic: TopicInvestigations, Aggregate: "investigation",
			New:     func() Payload { return &InvestigationInputSnapshottedV1{} },
			Subject: subjectOf(func(p *InvestigationInputSnapshottedV1) string { return p.InvestigationID }),
		},
		{
			Type: TypeInvestigationAttemptStartedV1, Topic: TopicInvestigations, Aggregate: "investigation",
			New:     func() Payload { return &InvestigationAttemptStartedV1{} },
			Subject: subjectOf(func(p *InvestigationAttemptStartedV1) string { return p.InvestigationID }),
		},
		{
			Type: TypeInvestigationExchangeRecordedV1, Topic: TopicInvestigations, Aggregate: "investigation",
			New:     func() Payload { return &InvestigationExchangeRecordedV1{} },
			Subject: subjectOf(func(p *InvestigationExchangeRecordedV1) string { return p.InvestigationID }),
		},
		{
			Type: TypeInvestigationClaimSubmittedV1, Topic: TopicInvestigations, Aggregate: "investigation",
			New:     func() Payload { return &InvestigationClaimSubmittedV1{} },
			Subject: subjectOf(func(p *InvestigationClaimSubmittedV1) string { return p.InvestigationID }),
		},
		{
			Type: TypeInvestigationClaimRetainedV1, Topic: TopicInvestigations, Aggregate: "investigation",
			New:     func() Payload { return &InvestigationClaimRetainedV1{} },
			Subject: subjectOf(func(p *InvestigationClaimRetainedV1) string { return p.InvestigationID }),
		},
		{
			Type: TypeInvestigationClaimValidatedV1, Topic: TopicInvestigations, Aggregate: "investigation",
			New:     func() Payload { return &InvestigationClaimValidatedV1{} },
			Subject: subjectOf(func(p *InvestigationClaimValidatedV1) string { return p.InvestigationID }),
		},
		{
			Type: TypeInvestigationClaimAssessedV1, Topic: TopicInvestigations, Aggregate: "investigation",
			New:     func() Payload { return &InvestigationClaimAssessedV1{} },
			Subject: subjectOf(func(p *InvestigationClaimAssessedV1) string { return p.InvestigationID }),
		},
		{
			Type: TypeInvestigationAttemptFailedV1, Topic: TopicInvestigations, Aggregate: "investigation",
			New:     func() Payload { return &InvestigationAttemptFailedV1{} },
			Subject: subjectOf(func(p *InvestigationAttemptFailedV1) string { return p.InvestigationID }),
		},
		{
			Type: TypeInvestigationStageOneFinishedV1, Topic: TopicInvestigations, Aggregate: "investigation",
			New:     func() Payload { return &InvestigationStageOneFinishedV1{} },
			Subject: subjectOf(func(p *InvestigationStageOneFinishedV1) string { return p.InvestigationID }),
		},
		{
			Type: TypeInvestigationKeyAttachedV1, Topic: TopicInvestigations, Aggregate: "investigation",
			New:     func() Payload { return &InvestigationKeyAttachedV1{} },
			Subject: subjectOf(func(p *InvestigationKeyAttachedV1) string { return p.InvestigationID }),
		},
		{
			Type: TypeAnalysisRequestedV1, Topic: TopicAnalyses, Aggregate: "analysis",
			New:     func() Payload { return &AnalysisRequestedV1{} },
			Subject: subjectOf(func(p *AnalysisRequestedV1) string { return p.AnalysisID }),
		},
		{
			Type: TypeAnalysisAttemptStartedV1, Topic: TopicAnalyses, Aggregate: "analysis",
			New:     func() Payload { return &AnalysisAttemptStartedV1{} },
			Subject: subjectOf(func(p *AnalysisAttemptStartedV1) string { return p.AnalysisID }),
		},
		{
			Type: TypeAnalysisExchangeRecordedV1, Topic: TopicAnalyses, Aggregate: "analysis",
			New:     func() Payload { return &AnalysisExchangeRecordedV1{} },
			Subject: subjectOf(func(p *AnalysisExchangeRecordedV1) string { return p.AnalysisID }),
		},
		{
			Type: TypeAnalysisClaimExtractedV1, Topic: TopicAnalyses, Aggregate: "analysis",
			New:     func() Payload { return &AnalysisClaimExtractedV1{} },
			Subject: subjectOf(func(p *AnalysisClaimExtractedV1) string { return p.AnalysisID }),
		},
		{
			Type: TypeAnalysisClaimTriagedV1, Topic: TopicAnalyses, Aggregate: "analysis",
			New:     func() Payload { return &AnalysisClaimTriagedV1{} },
			Subject: subjectOf(func(p *AnalysisClaimTriagedV1) string { return p.AnalysisID }),
		},
		{
			Type: TypeAnalysisQueryIssuedV1, Topic: TopicAnalyses, Aggregate: "analysis",
			New:     func() Payload { return &AnalysisQueryIssuedV1{} },
			Subject: subjectOf(func(p *AnalysisQueryIssuedV1) string { return p.AnalysisID }),
		},
		{
			Type: TypeAnalysisSourceAssessedV1, Topic: TopicAnalyses, Aggregate: "analysis",
			New:     func() Payload { return &AnalysisSourceAssessedV1{} },
			Subject: subjectOf(func(p *AnalysisSourceAssessedV1) string { return p.AnalysisID }),
		},
		{
			Type: TypeAnalysisClaimVerdictV1, Topic: TopicAnalyses, Aggregate: "analysis",
			New:     func() Payload { return &AnalysisClaimVerdictV1{} },
			Subject: subjectOf(func(p *AnalysisClaimVerdictV1) string { return p.AnalysisID }),
		},
		{
			Type: TypeAnalysisPostVerdictV1, Topic: TopicAnalyses, Aggregate: "analysis",
			New:     func() Payload { return &AnalysisPostVerdictV1{} },
			Subject: subjectOf(func(p *AnalysisPostVerdictV1) string { return p.AnalysisID }),
		},
		{
			Type: TypeAnalysisCompletedV1, Topic: TopicAnalyses, Aggregate: "analysis",
			New:     func() Payload { return &AnalysisCompletedV1{} },
			Subject: subjectOf(func(p *AnalysisCompletedV1) string { return p.AnalysisID }),
		},
		{
			Type: TypeAnalysisFailedV1, Topic: TopicAnalyses, Aggregate: "analysis",
			New:     func() Payload { return &AnalysisFailedV1{} },
			Subject: subjectOf(func(p *AnalysisFailedV1) string { return p.AnalysisID }),
		},
		{
			Type: TypeConfigurationDeclaredV1, Topic: TopicInvestigations, Aggregate: "analysis-control",
			New:     func() Payload { return &ConfigurationDeclaredV1{} },
			Subject: subjectOf(func(*ConfigurationDeclaredV1) string { return ControlSubject }),
		},
		{
			Type: TypeConfigurationPromotedV1, Topic: TopicInvestigations, Aggregate: "analysis-control",
			New:     func() Payload { return &ConfigurationPromotedV1{} },
			Subject: subjectOf(func(*ConfigurationPromotedV1) string { return ControlSubject }),
		},
		{
			Type: TypeExperimentStartedV1, Topic: TopicInvestigations, Aggregate: "analysis-control",
			New:     func() Payload { return &ExperimentStartedV1{} },
			Subject: subjectOf(func(*ExperimentStartedV1) string { return ControlSubject }),
		},
		{
			Type: TypeExperimentStoppedV1, Topic: TopicInvestigations, Aggregate: "analysis-control",
			New:     func() Payload { return &ExperimentStoppedV1{} },
			Subject: subjectOf(func(*ExperimentStoppedV1) string { return ControlSubject }),
		},
		{
			Type: TypeAppealFiledV1, Topic: TopicInvestigations, Aggregate: "appeal",
			New:     func() Payload { return &AppealFiledV1{} },
			Subject: subjectOf(func(p *AppealFiledV1) string { return p.AppealID }),
		},
		{
			Type: TypeAppealDecidedV1, Topic: TopicInvestigations, Aggregate: "appeal",
			New:     func() Payload { return &AppealDecidedV1{} },
			Subject: subjectOf(func(p *AppealDecidedV1) string { return p.AppealID }),
		},
		{
			Type: TypeAppealReviewStartedV1, Topic: TopicInvestigations, Aggregate: "appeal",
			New:     func() Payload { return &AppealReviewStartedV1{} },
			Subject: subjectOf(func(p *AppealReviewStartedV1) string { return p.AppealID }),
		},
		{
			Type: TypeAppealQueryIssuedV1, Topic: TopicInvestigations, Aggregate: "appeal",
			New:     func() Payload { return &AppealQueryIssuedV1{} },
			Subject: subjectOf(func(p *AppealQueryIssuedV1) string { return p.AppealID }),
		},
		{
			Type: TypeAppealURLFetchedV1, Topic: TopicInvestigations, Aggregate: "appeal",
			New:     func() Payload { return &AppealURLFetchedV1{} },
			Subject: subjectOf(func(p *AppealURLFetchedV1) string { return p.AppealID }),
		},
		{
			Type: TypeAppealExchangeRecordedV1, Topic: TopicInvestigations, Aggregate: "appeal",
			New:     func() Payload { return &AppealExchangeRecordedV1{} },
			Subject: subjectOf(func(p *AppealExchangeRecordedV1) string { return p.AppealID }),
		},
		{
			Type: TypeAppealEvidenceAssessedV1, Topic: TopicInvestigations, Aggregate: "appeal",
			New:     func() Payload { return &AppealEvidenceAssessedV1{} },
			Subject: subjectOf(func(p *AppealEvidenceAssessedV1) string { return p.AppealID }),
		},
		{
			Type: TypeAppealReviewFailedV1, Topic: TopicInvestigations, Aggregate: "appeal",
			New:     func() Payload { return &AppealReviewFailedV1{} },
			Subject: subjectOf(func(p *AppealReviewFailedV1) string { return p.AppealID }),
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

// subjectOf adapts a typed subject function; payloads arrive as pointers from
// decoding and may be passed by value by producers.
func subjectOf[T any](f func(*T) string) func(Payload) string {
	return func(p Payload) string {
		switch v := any(p).(type) {
		case *T:
			return f(v)
		case T:
			return f(&v)
		}
		return ""
	}
}
