package search

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/elastic/go-elasticsearch/v8"
	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/retry"
)

// Document is one search document to index at an external version.
type Document struct {
	ID      string
	Version int64
	Source  []byte
}

// ErrBulkRejected means Elasticsearch kept answering 429 (too many
// requests) for some documents after every retry.
var ErrBulkRejected = errors.New("elasticsearch kept rejecting documents (429)")

// Bulk indexes documents with _bulk at external versions. A document whose
// version (or a newer one) is already there answers 409 and counts as
// indexed; 429s, for the whole request or single items, are retried with
// exponential back-off a bounded number of times; any other failure is an
// error naming the document. A document Elasticsearch refuses for what it
// is (HTTP 400: a mapping or parse failure, an immense term, an illegal
// argument; 413: too large) is refused every time: the error is then
// marked kafka.Permanent, so the projector parks the event that built the
// document instead of retrying it forever. Every other failure (5xx, a
// read-only or missing index, a lost connection) is transient.
type Bulk struct {
	es *elasticsearch.Client
	// MaxAttempts bounds the tries of one document (default 6).
	MaxAttempts int
	// Backoff is the first delay after a 429 (default 100ms); it doubles up
	// to MaxBackoff (default 5s).
	Backoff, MaxBackoff time.Duration
	// MaxBytes bounds one request body (default 8 MiB).
	MaxBytes int
}

// NewBulk returns a bulk indexer with the default limits.
func NewBulk(es *elasticsearch.Client) *Bulk {
	return &Bulk{es: es, MaxAttempts: 6, Backoff: 100 * time.Millisecond, MaxBackoff: 5 * time.Second, MaxBytes: 8 << 20}
}

// Index indexes docs into index and returns once every one is stored (or
// was already stored at its version or a newer one).
func (b *Bulk) Index(ctx context.Context, index string, docs []Document) error {
	start, size := 0, 0
	for i, d := range docs {
		// 200 bytes cover the action line.
		if i > start && size+len(d.Source)+200 > b.MaxBytes {
			if err := b.indexChunk(ctx, index, docs[start:i]); err != nil {
				return err
			}
			start, size = i, 0
		}
		size += len(d.Source) + 200
	}
	if start < len(docs) {
		return b.indexChunk(ctx, index, docs[start:])
	}
	return nil
}

// bulkAnswer is the part of a _bulk answer Index reads.
type bulkAnswer struct {
	Errors bool `json:"errors"`
	Items  []map[string]struct {
		ID     string `json:"_id"`
		Status int    `json:"status"`
		Error  *struct {
			Type   string `json:"type"`
			Reason string `json:"reason"`
		} `json:"error"`
	} `json:"items"`
}

func (b *Bulk) indexChunk(ctx context.Context, index string, docs []Document) error {
	pending := docs
	for attempt := 1; ; attempt++ {
		rejected, err := b.send(ctx, index, pending)
		if err != nil {
			return err
		}
		if len(rejected) == 0 {
			return nil
		}
		if attempt >= b.MaxAttempts {
			return fmt.Errorf("index %d documents into %s (first %s) after %d attempts: %w",
				len(rejected), index, rejected[0].ID, attempt, ErrBulkRejected)
		}
		delay := retry.Exponential{Base: b.Backoff, Max: b.MaxBackoff}.Delay(attempt)
		if err := retry.Sleep(ctx, delay); err != nil {
			return fmt.Errorf("index into %s: %w", index, err)
		}
		pending = rejected
	}
}

// send makes one _bulk request and returns the documents to try again.
func (b *Bulk) send(ctx context.Context, index string, docs []Document) ([]Document, error) {
	body, err := bulkBody(index, docs)
	if err != nil {
		return nil, err
	}
	res, err := esapi.BulkRequest{Body: bytes.NewReader(body)}.Do(ctx, b.es)
	if err != nil {
		return nil, fmt.Errorf("bulk index into %s: %w", index, err)
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusTooManyRequests {
		_, _ = io.Copy(io.Discard, res.Body)
		return docs, nil
	}
	if res.StatusCode == http.StatusRequestEntityTooLarge {
		_, _ = io.Copy(io.Discard, res.Body)
		// No index name or request size (which counts it) in the message:
		// see the refused items below.
		return nil, kafka.Permanent(fmt.Errorf("elasticsearch refused %d documents (first %s) as too large: HTTP 413",
			len(docs), docs[0].ID))
	}
	if res.IsError() {
		return nil, fmt.Errorf("bulk index into %s: %w", index, readError(res))
	}
	var ans bulkAnswer
	if err := json.NewDecoder(res.Body).Decode(&ans); err != nil {
		return nil, fmt.Errorf("bulk index into %s: decode answer: %w", index, err)
	}
	if len(ans.Items) != len(docs) {
		return nil, fmt.Errorf("bulk index into %s: %d items answered for %d documents", index, len(ans.Items), len(docs))
	}
	if !ans.Errors {
		return nil, nil
	}
	var retry []Document
	var failures []string
	refusedOnly := true
	for i, item := range ans.Items {
		r := item["index"]
		switch {
		case r.Status >= 200 && r.Status < 300:
		case r.Status == http.StatusConflict:
			// This version or a newer one is stored already.
		case r.Status == http.StatusTooManyRequests:
			retry = append(retry, docs[i])
		default:
			reason := http.StatusText(r.Status)
			if r.Error != nil {
				reason = r.Error.Type + ": " + r.Error.Reason
			}
			refusedOnly = refusedOnly && refusesDocument(r.Status)
			failures = append(failures, fmt.Sprintf("%s (version %d): HTTP %d %s", docs[i].ID, docs[i].Version, r.Status, reason))
		}
	}
	if len(failures) > 0 && refusedOnly {
		// No index name in the message: a projector stores it with the
		// parked event, and a rebuild into another generation's index
		// must park the same row.
		return nil, kafka.Permanent(fmt.Errorf("elasticsearch refused %d of %d documents: %s",
			len(failures), len(docs), strings.Join(failures, "; ")))
	}
	if len(failures) > 0 {
		return nil, fmt.Errorf("bulk index into %s: %d of %d documents failed: %s",
			index, len(failures), len(docs), strings.Join(failures, "; "))
	}
	return retry, nil
}

// bulkBody is the _bulk request indexing docs into index at their
// external versions: an action line and the source of each, sized once
// (the action lines are appended, not marshalled from maps: they were
// most of the time spent building a body).
func bulkBody(index string, docs []Document) ([]byte, error) {
	quotedIndex, err := json.Marshal(index)
	if err != nil {
		return nil, err
	}
	size := 0
	for _, d := range docs {
		size += len(d.Source) + len(d.ID) + len(quotedIndex) + 80
	}
	body := make([]byte, 0, size)
	for _, d := range docs {
		id, err := json.Marshal(d.ID)
		if err != nil {
			return nil, err
		}
		body = append(body, `{"index":{"_index":`...)
		body = append(body, quotedIndex...)
		body = append(body, `,"_id":`...)
		body = append(body, id...)
		body = append(body, `,"version":`...)
		body = strconv.AppendInt(body, d.Version, 10)
		body = append(body, `,"version_type":"external"}}`+"\n"...)
		body = append(body, d.Source...)
		body = append(body, '\n')
	}
	return body, nil
}

// refusesDocument reports item statuses that refuse the document itself
// (so every retry fails alike): 400 (mapper_parsing_exception,
// document_parsing_exception, illegal_argument_exception such as an
// immense term, strict_dynamic_mapping_exception) and 413.
func refusesDocument(status int) bool {
	return status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge
}
