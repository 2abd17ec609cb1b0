package dashboard

// The static assets: the files of static/ by name, nothing else.

import (
	"io/fs"
	"net/http"
	"strings"
)

// staticFiles is the static/ folder of the embedded assets.
func staticFiles() (fs.FS, error) {
	return fs.Sub(assets, "static")
}

// serveStatic serves /static/NAME for a regular file NAME directly in static/ and answers 404 to
// anything else: a directory (no listings), a path with a slash or an encoded "..", such as
// /static/%2e%2e/templates/layout.html, which the mux does not clean (it
// served the templates' source).
func (h *Handler) serveStatic(w http.ResponseWriter, r *http.Request) {
	name, _ := strings.CutPrefix(r.URL.Path, "/static/")
	if !h.isAsset(name) {
		h.fail(w, r, http.StatusNotFound, "no such file: /static/ holds the stylesheet only")
		return
	}
	http.ServeFileFS(w, r, h.static, name)
}

// isAsset reports whether name is a regular file directly in static/.
func (h *Handler) isAsset(name string) bool {
	if !fs.ValidPath(name) || name == "." || strings.Contains(name, "/") {
		return false
	}
	st, err := fs.Stat(h.static, name)
	return err == nil && st.Mode().IsRegular()
}
