package analytics_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/projections/analytics"
)

// readmeQueries returns the sql blocks of README.md's analyst section.
func readmeQueries(t *testing.T) []string {
	t.Helper()
	body, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	s := string(body)
	const heading = "## For analysts: incidence in ClickHouse"
	i := strings.Index(s, heading)
	require.GreaterOrEqual(t, i, 0, "README.md lacks %q", heading)
	section := s[i+len(heading):]
	if j := strings.Index(section, "\n## "); j >= 0 {
		section = section[:j]
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllStringSubmatch(section, -1) {
		out = append(out, strings.TrimSpace(m[1]))
	}
	return out
}

// curlQuery runs sql over ClickHouse's HTTP interface, as an analyst's curl
// does, and returns the TabSeparated answer.
func curlQuery(t *testing.T, chURL, database, sql string) string {
	t.Helper()
	u, err := url.Parse(chURL)
	require.NoError(t, err)
	q := u.Query()
	q.Set("database", database)
	u.RawQuery = q.Encode()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(sql))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s\n%s", sql, out)
	return string(out)
}

func round4(x float64) string {
	return strconv.FormatFloat(math.RoundToEven(x*1e4)/1e4, 'f', -1, 64)
}

func TestREADMEQueries(t *testing.T) {
	queries := readmeQueries(t)
	require.Len(t, queries, 12, "the expectations below follow the README's examples in order")

	w := newWorkload(4, 200, 3)
	f := newFixture(t, 0)
	f.feed(t, w.batches(500, 4))
	analyses := analysisWorkload(4, 160)
	f.feed(t, analysisRecordsOf(t, analyses, 3, 200))
	m := buildModel(w.events)
	march, april := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	mid := time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)

	var want []string
	// 1. incidence by platform in March
	var b strings.Builder
	platforms := append([]string(nil), events.Platforms...)
	sort.Strings(platforms)
	for _, p := range platforms {
		inc := m.incidence(analytics.Filter{Platform: p, WindowStart: &march, WindowEnd: &april})
		if inc.TotalInvestigatedPosts > 0 {
			fmt.Fprintf(&b, "%s\t%d\t%d\t%s\n", p, inc.TotalInvestigatedPosts, inc.InvestigatedPostsWithFlags, round4(inc.FactCheckIncidence))
		}
	}
	want = append(want, b.String())
	// 2. overall, first half of March
	inc := m.incidence(analytics.Filter{WindowStart: &march, WindowEnd: &mid})
	want = append(want, fmt.Sprintf("%d\t%d\t%s\n", inc.TotalInvestigatedPosts, inc.InvestigatedPostsWithFlags, round4(inc.FactCheckIncidence)))
	// 3. by author in March
	type authorRow struct {
		id  string
		inc analytics.Incidence
	}
	var rows []authorRow
	for id := range m.names {
		inc := m.incidence(analytics.Filter{AuthorID: id, WindowStart: &march, WindowEnd: &april})
		if inc.TotalInvestigatedPosts > 0 {
			rows = append(rows, authorRow{id, inc})
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i].inc, rows[j].inc
		if a.InvestigatedPostsWithFlags != b.InvestigatedPostsWithFlags {
			return a.InvestigatedPostsWithFlags > b.InvestigatedPostsWithFlags
		}
		if a.TotalInvestigatedPosts != b.TotalInvestigatedPosts {
			return a.TotalInvestigatedPosts > b.TotalInvestigatedPosts
		}
		return rows[i].id < rows[j].id
	})
	b.Reset()
	for _, r := range rows {
		fmt.Fprintf(&b, "%s\t%d\t%d\n", m.names[r.id].displayName, r.inc.TotalInvestigatedPosts, r.inc.InvestigatedPostsWithFlags)
	}
	want = append(want, b.String())
	// 4. top five authors by flagged claims
	b.Reset()
	for i, s := range m.authorStats() {
		if i == 5 {
			break
		}
		fmt.Fprintf(&b, "%s\t%s\t%d\t%d\n", s.DisplayName, s.Platform, s.InvestigatedPosts, s.FlaggedClaims)
	}
	want = append(want, b.String())
	// 5. daily series of March, platforms summed
	type day struct{ completed, flagged, claims, views int64 }
	days := map[time.Time]*day{}
	var order []time.Time
	for _, d := range m.daily() {
		if d.Day.Before(march) || !d.Day.Before(april) {
			continue
		}
		if days[d.Day] == nil {
			days[d.Day] = &day{}
			order = append(order, d.Day)
		}
		x := days[d.Day]
		x.completed += d.InvestigationsCompleted
		x.flagged += d.PostsFlagged
		x.claims += d.Claims
		x.views += d.Views
	}
	b.Reset()
	for _, d := range order {
		x := days[d]
		fmt.Fprintf(&b, "%s\t%d\t%d\t%d\t%d\n", d.Format("2006-01-02"), x.completed, x.flagged, x.claims, x.views)
	}
	want = append(want, b.String())
	// 6. weekly incidence on X
	type week struct{ posts, flagged map[string]bool }
	weeks := map[time.Time]*week{}
	for _, inv := range m.invs {
		if !inv.complete || m.versions[inv.versionID].platform != events.PlatformX ||
			inv.completedAt.Before(march) || !inv.completedAt.Before(april) {
			continue
		}
		d := inv.completedAt.Truncate(24 * time.Hour)
		monday := d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
		if weeks[monday] == nil {
			weeks[monday] = &week{posts: map[string]bool{}, flagged: map[string]bool{}}
		}
		weeks[monday].posts[inv.postID] = true
		if inv.claims > 0 {
			weeks[monday].flagged[inv.postID] = true
		}
	}
	var mondays []time.Time
	for d := range weeks {
		mondays = append(mondays, d)
	}
	sort.Slice(mondays, func(i, j int) bool { return mondays[i].Before(mondays[j]) })
	b.Reset()
	for _, d := range mondays {
		fmt.Fprintf(&b, "%s\t%d\t%d\n", d.Format("2006-01-02"), len(weeks[d].posts), len(weeks[d].flagged))
	}
	want = append(want, b.String())
	want = append(want, m.assessmentAnswers(t, march, april)...)
	want = append(want, analysisAnswers(t, analyses)...)

	for i, q := range queries {
		require.NotEmpty(t, strings.TrimSpace(want[i]), "query %d: the workload must give it something to count", i+1)
		t.Logf("README query %d answers %d rows", i+1, strings.Count(want[i], "\n"))
		require.Equal(t, want[i], curlQuery(t, f.url, f.database, q), "README query %d:\n%s", i+1, q)
	}
}

// assessmentAnswers are the answers of the README's evidence engine
// examples (withheld rate by reason, verdicts by platform, prompt and
// policy, tier mix, failed rules in [from, to)), computed from the model's
// first assessment of each submission.
func (m model) assessmentAnswers(t *testing.T, from, to time.Time) []string {
	require.NotEmpty(t, m.assessments, "the workload has assessments")
	var out []string

	// 7. withheld by reason, per policy
	assessed := map[string]int{}
	type reasonKey struct{ policy, reason string }
	withheld := map[reasonKey]int{}
	for _, a := range m.assessments {
		assessed[a.p.PolicyVersion]++
		if !a.p.Published {
			withheld[reasonKey{a.p.PolicyVersion, a.p.Reason}]++
		}
	}
	keys := make([]reasonKey, 0, len(withheld))
	for k := range withheld {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.policy != b.policy {
			return a.policy < b.policy
		}
		if withheld[a] != withheld[b] {
			return withheld[a] > withheld[b]
		}
		return a.reason < b.reason
	})
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s\t%s\t%d\t%d\t%s\n", k.policy, k.reason, withheld[k], assessed[k.policy],
			round4(float64(withheld[k])/float64(assessed[k.policy])))
	}
	out = append(out, b.String())

	// 8. verdicts by platform, prompt and policy
	type verdictKey struct{ platform, prompt, policy, verdict string }
	type counts struct{ claims, published, withheld int }
	verdicts := map[verdictKey]*counts{}
	for _, a := range m.assessments {
		k := verdictKey{a.platform, a.prompt, a.p.PolicyVersion, a.p.Verdict}
		if verdicts[k] == nil {
			verdicts[k] = &counts{}
		}
		verdicts[k].claims++
		if a.p.Published {
			verdicts[k].published++
		} else {
			verdicts[k].withheld++
		}
	}
	vkeys := make([]verdictKey, 0, len(verdicts))
	for k := range verdicts {
		vkeys = append(vkeys, k)
	}
	sort.Slice(vkeys, func(i, j int) bool {
		a, b := vkeys[i], vkeys[j]
		return fmt.Sprint(a.platform, "\x00", a.prompt, "\x00", a.policy, "\x00", a.verdict) <
			fmt.Sprint(b.platform, "\x00", b.prompt, "\x00", b.policy, "\x00", b.verdict)
	})
	b.Reset()
	for _, k := range vkeys {
		c := verdicts[k]
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%d\t%d\t%d\n", k.platform, k.prompt, k.policy, k.verdict, c.claims, c.published, c.withheld)
	}
	out = append(out, b.String())

	// 9. tier mix
	type tierKey struct {
		registry string
		tier     int
	}
	sources := map[tierKey]int{}
	domains := map[tierKey]map[string]bool{}
	claims := map[tierKey]map[string]bool{}
	total := map[string]int{}
	for _, a := range m.assessments {
		for _, s := range a.p.Sources {
			k := tierKey{a.p.RegistryVersion, s.Tier}
			if domains[k] == nil {
				domains[k], claims[k] = map[string]bool{}, map[string]bool{}
			}
			sources[k]++
			domains[k][s.Domain] = true
			claims[k][a.p.SubmissionID] = true
			total[k.registry]++
		}
	}
	tkeys := make([]tierKey, 0, len(sources))
	for k := range sources {
		tkeys = append(tkeys, k)
	}
	sort.Slice(tkeys, func(i, j int) bool {
		if tkeys[i].registry != tkeys[j].registry {
			return tkeys[i].registry < tkeys[j].registry
		}
		return tkeys[i].tier < tkeys[j].tier
	})
	b.Reset()
	for _, k := range tkeys {
		fmt.Fprintf(&b, "%s\t%d\t%d\t%d\t%d\t%s\n", k.registry, k.tier, sources[k], len(domains[k]), len(claims[k]),
			round4(float64(sources[k])/float64(total[k.registry])))
	}
	out = append(out, b.String())

	// 10. every failed rule of withheld claims assessed in [from, to)
	rules := map[reasonKey]int{}
	for _, a := range m.assessments {
		if a.p.Published || a.at.Before(from) || !a.at.Before(to) {
			continue
		}
		for _, r := range a.p.Failed {
			rules[reasonKey{a.p.PolicyVersion, r}]++
		}
	}
	rkeys := make([]reasonKey, 0, len(rules))
	for k := range rules {
		rkeys = append(rkeys, k)
	}
	sort.Slice(rkeys, func(i, j int) bool {
		a, b := rkeys[i], rkeys[j]
		if a.policy != b.policy {
			return a.policy < b.policy
		}
		if rules[a] != rules[b] {
			return rules[a] > rules[b]
		}
		return a.reason < b.reason
	})
	b.Reset()
	for _, k := range rkeys {
		fmt.Fprintf(&b, "%s\t%s\t%d\n", k.policy, k.reason, rules[k])
	}
	out = append(out, b.String())
	return out
}
