package suggest

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/golfcrawler/golf-crawler/crawler"
)

// Value shapes: what a cell of a tee-time row looks like. They are deliberately narrower than the
// crawler's parsers (ParseTeeTime reads "7시반" too): here they decide which member is which.
var (
	reColonTime   = regexp.MustCompile(`^([01]?\d|2[0-3]):[0-5]\d(:00)?$`)
	reCompactTime = regexp.MustCompile(`^(0[4-9]|1\d|2[01])[0-5]\d$`)
	rePriceShape  = regexp.MustCompile(`^[₩￦]?\s*\d{1,3}(,\d{3})+\s*(원|KRW)?$|^[₩￦]?\d{4,7}\s*(원|KRW)?$`)
	rePlayers     = regexp.MustCompile(`^([1-9])\s*(명|인|people|pax)?$`)
	reYearless    = regexp.MustCompile(`^(0?[1-9]|1[0-2])[/.-](0?[1-9]|[12]\d|3[01])(\s*\(.\))?$`)
	reFullDate    = regexp.MustCompile(`^(19|20)\d\d[-./]?(0[1-9]|1[0-2])[-./]?(0[1-9]|[12]\d|3[01])(\s*\(.\))?$`)
	reClubName    = regexp.MustCompile(`(?i)(\bcc|\bgc|c\.c|골프|컨트리|클럽|club|country|golf|레저|리조트|resort)\s*$`)
	reDigitsOnly  = regexp.MustCompile(`^[\d\s.,:/()-]*$`)
)

// shape names what a value looks like.
type shape int

const (
	shapeTeeTime shape = iota
	shapePrice
	shapePlayers
	shapeYearlessDate
	shapeFullDate
	shapeName // text that is none of the above: a course, a part
	shapeUnknownPrice
	nShapes
)

var shapeNames = [nShapes]string{"HH:MM", "a price", "a player count", "a year-less date", "a date", "a name", "an unknown price"}

// shapesOf returns the shapes v has (several: "4" is a player count, never a tee time).
func shapesOf(v string) []shape {
	s := strings.TrimSpace(crawler.CleanText(v))
	if s == "" {
		return nil
	}
	var out []shape
	if reColonTime.MatchString(s) || reCompactTime.MatchString(s) {
		out = append(out, shapeTeeTime)
	}
	if rePriceShape.MatchString(s) {
		if p, err := crawler.ParsePrice(s); err == nil && p != nil && *p >= 1000 {
			out = append(out, shapePrice)
		}
	} else if p, err := crawler.ParsePrice(s); err == nil && p == nil {
		out = append(out, shapeUnknownPrice)
	}
	if rePlayers.MatchString(s) {
		out = append(out, shapePlayers)
	}
	if reYearless.MatchString(s) {
		out = append(out, shapeYearlessDate)
	}
	if reFullDate.MatchString(s) {
		out = append(out, shapeFullDate)
	}
	if len(out) == 0 && !reDigitsOnly.MatchString(s) && len([]rune(s)) <= 40 {
		out = append(out, shapeName)
	}
	return out
}

// looksLikeClub reports whether a name reads like a club's ("레이크 CC", "오션뷰 골프클럽").
func looksLikeClub(s string) bool {
	return reClubName.MatchString(strings.TrimSpace(crawler.CleanText(s)))
}

// Name hints: lower-cased substrings of a member name, column header or class per field.
var nameHints = map[string][]string{
	"tee_time":    {"teetime", "tee_time", "booktime", "time", "시간", "tm", "hour"},
	"price":       {"greenfee", "green_fee", "fee", "cost", "price", "amt", "amount", "그린피", "요금", "금액", "charge"},
	"players":     {"visitor", "people", "player", "person", "cnt", "count", "인원", "pax", "member"},
	"course":      {"club", "golf", "골프장", "course_name", "cc_name", "gc", "course"},
	"course_part": {"part", "cos", "코스", "hole", "sub"},
	"round_date":  {"date", "day", "일자", "날짜", "ymd"},
}

// hint returns how well name matches the hints of field: the position of the first hint it
// contains from the end of the list (earlier hints are stronger), 0 for none.
func hint(field, name string) int {
	n := strings.ToLower(name)
	hs := nameHints[field]
	for i, h := range hs {
		if strings.Contains(n, h) {
			return len(hs) - i
		}
	}
	return 0
}

// column is one candidate member of the rows: its name (JSON member, or the HTML cell's header
// and class), where to read it (a path or selector) and its values, one per row ("" when absent).
type column struct {
	name   string
	where  string
	values []string
}

// count returns how many non-empty values have shape sh, and how many are non-empty.
func (c column) count(sh shape) (n, nonEmpty int) {
	for _, v := range c.values {
		shs := shapesOf(v)
		if len(shs) == 0 {
			continue
		}
		nonEmpty++
		for _, s := range shs {
			if s == sh {
				n++
				break
			}
		}
	}
	return n, nonEmpty
}

// mostly reports whether most non-empty values (at least 80 %, at least one) have shape sh,
// counting also the values of shape alsoOK.
func (c column) mostly(sh shape, alsoOK ...shape) (ok bool, n, total int) {
	n, total = c.count(sh)
	extra := 0
	for _, a := range alsoOK {
		e, _ := c.count(a)
		extra += e
	}
	return n > 0 && (n+extra)*5 >= total*4, n, len(c.values)
}

func itoa(n int) string { return strconv.Itoa(n) }
