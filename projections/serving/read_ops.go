package serving

import (
	"context"
	"fmt"
)

// InvestigationsByStatus counts investigations per status (PENDING,
// PROCESSING, COMPLETE, FAILED) for operations metrics. Statuses without an
// investigation are absent.
func (r *Reader) InvestigationsByStatus(ctx context.Context) (map[string]int64, error) {
	rows, err := r.pool.Query(ctx, `SELECT status, count(*) FROM investigations GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("investigations by status: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var status string
		var n int64
		if err := rows.Scan(&status, &n); err != nil {
			return nil, fmt.Errorf("investigations by status: %w", err)
		}
		out[status] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("investigations by status: %w", err)
	}
	return out, nil
}
