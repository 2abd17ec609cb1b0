package dashboard

// One listing's page: its lifetimes and its events.

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/textfmt"
	"github.com/golfcrawler/golf-crawler/store"
)

type listingData struct {
	Key      string
	Life     []listingRow
	Events   []eventRow
	Timeline *SVG
	Legend   []legendItem
}

type eventRow struct {
	store.ListingEvent
	At, Ingested string
	Price        string
	Players      string
	Position     string
}

func (h *Handler) listing(w http.ResponseWriter, r *http.Request) {
	key, msg := listingKey(r)
	if msg != "" {
		h.fail(w, r, http.StatusBadRequest, msg)
		return
	}
	var life []store.Lifetime
	var evs []store.ListingEvent
	if !h.readPage(w, r, func(rd *store.Reader) error {
		var err error
		if life, err = rd.Listing(r.Context(), key); err != nil {
			return err
		}
		evs, err = rd.ListingEvents(r.Context(), key)
		return err
	}) {
		return
	}
	if len(evs) == 0 {
		h.fail(w, r, http.StatusNotFound, "no events for this listing key: pick a listing on the Listings page")
		return
	}
	loc := h.cfg.Loc
	d := listingData{Key: key}
	for _, l := range life {
		lr := listingRow{Lifetime: l, Opened: l.OpenedAt.In(loc).Format("2006-01-02 15:04")}
		if l.ClosedAt != nil {
			lr.Closed = l.ClosedAt.In(loc).Format("2006-01-02 15:04")
		}
		d.Life = append(d.Life, lr)
	}
	var spans []span
	var open *span
	var tev []timelineEvent
	d.Events, spans, open, tev = listingEvents(evs, loc)
	if open != nil {
		// Still open in the events: up to its projected close (expiry) or as-of.
		open.To = maxT(open.From, h.cfg.AsOf())
		if len(life) > 0 && life[0].ClosedAt != nil {
			open.To, open.Status = *life[0].ClosedAt, life[0].Status
		}
		spans = append(spans, *open)
	}
	d.Timeline = timeline(spans, tev, loc)
	for _, t := range typeOrder {
		d.Legend = append(d.Legend, legendItem{t, typeColor[t]})
	}
	title := key
	if len(life) > 0 {
		title = life[0].CourseName + " " + string(life[0].PlayDate) + " " + string(life[0].TeeTime)
	}
	h.render(w, r, http.StatusOK, "listing", title, d)
}

// listingKey is the page's one parameter, key, or the sentence of a 400 page.
func listingKey(r *http.Request) (key, msg string) {
	q := r.URL.Query()
	key = q.Get("key")
	if key == "" || len(q) != 1 || len(q["key"]) != 1 {
		return "", "give exactly one listing key: /listing?key=… (follow a link from the Listings page)"
	}
	if err := checkText("key", key); err != nil {
		return "", err.Error()
	}
	if len(key) > events.MaxListingKeyBytes {
		return "", fmt.Sprintf("a listing key is at most %d bytes", events.MaxListingKeyBytes)
	}
	return key, ""
}

// listingEvents is the events table and the timeline of a listing's events: the spans between
// its openings and closes, the span the events leave open (nil if none; its To is for the caller)
// and a point per event.
func listingEvents(evs []store.ListingEvent, loc *time.Location) (rows []eventRow, spans []span, open *span, tev []timelineEvent) {
	for _, e := range evs {
		er := eventRow{ListingEvent: e, At: e.OccurredAt.In(loc).Format("2006-01-02 15:04:05"),
			Ingested: e.IngestedAt.In(loc).Format("2006-01-02 15:04:05"), Price: "-", Players: "-", Position: "-"}
		if e.PriceKRW != nil {
			er.Price = textfmt.Thousands(*e.PriceKRW) + "원"
		}
		if e.Players != nil {
			er.Players = strconv.Itoa(int(*e.Players))
		}
		if e.Topic != nil && e.Partition != nil && e.Offset != nil {
			er.Position = fmt.Sprintf("%s/%d@%d", *e.Topic, *e.Partition, *e.Offset)
		}
		rows = append(rows, er)
		detail := er.Price
		switch e.Type {
		case "listing_opened":
			if open == nil {
				open = &span{From: e.OccurredAt, Status: "open"}
			}
		case "listing_closed":
			if open != nil {
				open.To, open.Status = e.OccurredAt, "booked"
				if e.CloseReason != nil {
					open.Status = *e.CloseReason
					detail = *e.CloseReason
				}
				spans = append(spans, *open)
				open = nil
			}
		}
		tev = append(tev, timelineEvent{At: e.OccurredAt, Type: e.Type, Detail: detail})
	}
	return rows, spans, open, tev
}
