package dashboard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/golfcrawler/golf-crawler/internal/textfmt"
	"github.com/golfcrawler/golf-crawler/store"
)

type pages map[string]*template.Template

func parsePages() (pages, error) {
	funcs := template.FuncMap{
		"f1":  func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
		"dur": fmtDur,
		"won": func(p *int64) string {
			if p == nil {
				return "-"
			}
			return textfmt.Thousands(*p) + "원"
		},
		"int":  func(v int64) string { return textfmt.Thousands(v) },
		"lag":  func(v int64) string { return textfmt.Thousands(v) },
		"pct":  func(a, b int) string { return strconv.FormatFloat(100*float64(a)/float64(max(b, 1)), 'f', 1, 64) + "%" },
		"sort": sortLink,
	}
	out := pages{}
	for _, name := range []string{"overview", "listings", "listing", "pipeline", "error"} {
		t, err := template.New(name).Funcs(funcs).ParseFS(assets, "templates/layout.html", "templates/svg.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("dashboard templates: %w", err)
		}
		out[name] = t
	}
	if _, err := fs.Stat(assets, "static/style.css"); err != nil {
		return nil, err
	}
	return out, nil
}

// page is what every template gets.
type page struct {
	Title string
	Nav   string
	Zone  string
	AsOf  string
	Data  any
}

// render executes the page into a buffer first, so an error never leaves half a page.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name, title string, data any) {
	var buf bytes.Buffer
	p := page{Title: title, Nav: name, Zone: h.cfg.Loc.String(), AsOf: h.cfg.AsOf().In(h.cfg.Loc).Format("2006-01-02 15:04 MST"), Data: data}
	if err := h.pages[name].ExecuteTemplate(&buf, "layout", p); err != nil {
		h.cfg.Logger.ErrorContext(r.Context(), "dashboard: render", "page", name, "err", err)
		http.Error(w, "internal error while rendering the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

// fail answers with an error page saying what to do.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	h.render(w, r, status, "error", http.StatusText(status), struct {
		Status int
		Msg    string
	}{status, msg})
}

// dbError maps a query error onto 503 (timeout, database away) or 500, logging it.
func (h *Handler) dbError(w http.ResponseWriter, r *http.Request, err error) {
	h.cfg.Logger.ErrorContext(r.Context(), "dashboard: query", "path", r.URL.Path, "err", err)
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && pe.Code == "57014", errors.Is(err, context.DeadlineExceeded):
		h.fail(w, r, http.StatusServiceUnavailable, "the database did not answer in time; try again, or narrow the filters")
	case !store.IsTransient(err):
		h.fail(w, r, http.StatusInternalServerError, "the query failed; see the server's log")
	default:
		h.fail(w, r, http.StatusServiceUnavailable, "the database is not reachable; check DATABASE_URL and that PostgreSQL is up")
	}
}

// read runs fn in one read-only transaction, bounded by the query timeout and, with a fixed
// as-of, reading the views as of it (every query of a page, statuses included).
func (h *Handler) read(r *http.Request, fn func(*store.Reader) error) error {
	o := store.ReadOptions{Timeout: h.cfg.QueryTimeout}
	if h.fixed {
		o.AsOf = h.cfg.AsOf()
	}
	return h.cfg.Store.ReadOnly(r.Context(), o, fn)
}

// readPage is read for a page: when it fails, the request is answered with the error page
// (dbError) and readPage returns false.
func (h *Handler) readPage(w http.ResponseWriter, r *http.Request, fn func(*store.Reader) error) bool {
	if err := h.read(r, fn); err != nil {
		h.dbError(w, r, err)
		return false
	}
	return true
}
