package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/ops"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/serving/workload"
)

// readyzReport is the API's /readyz answer.
type readyzReport struct {
	status   int
	header   string   // ops.HeaderDegraded
	Ready    bool     `json:"ready"`
	Degraded []string `json:"degraded"`
	Checks   []struct {
		Name     string               `json:"name"`
		OK       bool                 `json:"ok"`
		Degraded bool                 `json:"degraded"`
		Detail   []ops.ProjectorState `json:"detail"`
	} `json:"checks"`
}

func getReadyz(t *testing.T, base string) (readyzReport, error) {
	t.Helper()
	var rep readyzReport
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		return rep, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return rep, err
	}
	if err := json.Unmarshal(body, &rep); err != nil {
		return rep, fmt.Errorf("%w: %s", err, body)
	}
	rep.status, rep.header = resp.StatusCode, resp.Header.Get(ops.HeaderDegraded)
	return rep, nil
}

// projections is the projections check's detail ("" when it passed).
func (r readyzReport) projections() (ok bool, detail []ops.ProjectorState, found bool) {
	for _, c := range r.Checks {
		if c.Name == "projections" {
			return c.OK, c.Detail, true
		}
	}
	return false, nil, false
}

// TestAPIReadyzReportsStoppedProjectors runs `errata serve` over a log with
// events and no worker: /readyz still answers 200 (the API serves reads)
// but names the degraded projections check, every projector stopped and
// lagging by the whole log. With a worker caught up it is clean; after the
// worker stops, the projectors are reported stopped with no lag.
func TestAPIReadyzReportsStoppedProjectors(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	w := workload.Generate(workload.Spec{
		Seed: 13, Posts: 20, ViewsPerPost: 4, Viewers: 5, IPRanges: 2, Days: 1,
		IPRangeDailyCap: 10, Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
	})
	total := int64(len(w.Events))
	addr := freeAddr(t)
	rig := newWorkerRig(t, ctx, 10, "ERRATA_HTTP_ADDR="+addr, "ERRATA_SERVER_VERIFICATION=false",
		"ERRATA_PROJECTION_LAG_DEGRADED=0")
	require.NoError(t, rig.append(ctx, w.Events, 1000))
	base := "http://" + addr
	logDir := t.TempDir()
	api := startErrata(t, rig.env, filepath.Join(logDir, "serve.log"), "serve")
	defer api.stop(t)

	stopped := func(lag int64) []ops.ProjectorState {
		var out []ops.ProjectorState
		for _, name := range projectorNames() {
			out = append(out, ops.ProjectorState{Projector: name, Running: false, Lag: lag, Lagging: lag > 0})
		}
		return out
	}
	degraded := func(want []ops.ProjectorState) {
		t.Helper()
		var rep readyzReport
		testenv.Eventually(t, 60*time.Second, func() (bool, string) {
			var err error
			rep, err = getReadyz(t, base)
			_, detail, _ := rep.projections()
			return err == nil && fmt.Sprint(detail) == fmt.Sprint(want), fmt.Sprintf("readyz %+v (err %v)", rep, err)
		})
		require.Equal(t, http.StatusOK, rep.status, "a degraded API still serves")
		require.True(t, rep.Ready)
		require.Equal(t, []string{"projections"}, rep.Degraded)
		require.Equal(t, "projections", rep.header)
		ok, detail, _ := rep.projections()
		require.False(t, ok)
		require.Equal(t, want, detail)
		for _, c := range rep.Checks {
			require.Equal(t, c.Name != "projections", c.OK, "check %s", c.Name)
		}
	}

	// No worker ever ran: every projector is stopped and has the whole log
	// (the posts topic; the others are empty) ahead of it.
	degraded(stopped(total))

	worker := startErrata(t, rig.env, filepath.Join(logDir, "worker.log"), "worker", "--stages=")
	var rep readyzReport
	testenv.Eventually(t, 2*time.Minute, func() (bool, string) {
		var err error
		rep, err = getReadyz(t, base)
		ok, _, found := rep.projections()
		return err == nil && found && ok, fmt.Sprintf("readyz %+v (err %v)", rep, err)
	})
	require.Equal(t, http.StatusOK, rep.status)
	require.True(t, rep.Ready)
	require.Empty(t, rep.Degraded)
	require.Empty(t, rep.header)
	for _, c := range rep.Checks {
		require.True(t, c.OK, "check %s", c.Name)
	}
	require.Equal(t, int(total), rig.applied(t), "clean means the serving projection has applied the whole log")

	worker.stop(t)
	degraded(stopped(0))
}
