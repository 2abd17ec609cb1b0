package site

import (
	"errors"
	"fmt"
	"html"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The meanings of the normalizers' errors. Each error wraps one of them and quotes the raw text;
// the caller skips (and counts) the listing rather than publish a guess.
var (
	ErrBadPrice   = errors.New("bad price")
	ErrBadPlayers = errors.New("bad players")
	ErrBadTeeTime = errors.New("bad tee_time")
)

// MaxPriceKRW bounds ParsePrice: a green fee is at most a few hundred thousand won, so anything
// above 10 billion won is a misread (two numbers run together), not a price.
const MaxPriceKRW = 10_000_000_000

// maxFieldLen bounds the raw text of a price, players or tee time cell: longer text is a misparse
// of the page (a whole row in one cell), rejected before any work.
const maxFieldLen = 256

// MaxPlayers bounds ParsePlayers to the events contract's limit on players.
const MaxPlayers = 100

// Seoul returns the Asia/Seoul location that play dates and tee times are expressed in. It is
// loaded once from the embedded time/tzdata; should that ever fail, a fixed UTC+9 zone stands in,
// which is exact since Korea has had no daylight saving time since 1988.
func Seoul() *time.Location { return seoul() }

var seoul = sync.OnceValue(func() *time.Location {
	loc, err := time.LoadLocation("Asia/Seoul")
	if err != nil {
		return time.FixedZone("KST", 9*60*60)
	}
	return loc
})

// CleanText trims s and folds every run of white space (nbsp and the ideographic space included)
// into one ASCII space. It drops controls and every format character (Unicode category Cf: the
// bidi marks U+200E/U+200F, embeddings and overrides U+202A–U+202E, isolates U+2066–U+2069, the
// zero-width space, joiners, the byte order mark, the soft hyphen), replaces invalid UTF-8 with
// U+FFFD and composes the result to NFC, so that one name is one key however a site spells it.
// The result is always valid UTF-8 and CleanText(CleanText(s)) == CleanText(s). It does not
// decode HTML entities: colly hands over decoded text.
func CleanText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			r = utf8.RuneError
		case unicode.IsSpace(r):
			space = true
			continue
		case isInvisible(r):
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	out := b.String()
	if norm.NFC.IsNormalString(out) {
		return out
	}
	// Composition never makes a space, a control or a format mark, nor takes one apart.
	return norm.NFC.String(out)
}

// isInvisible reports characters that carry no text: controls and format characters (Cf: bidi
// marks, zero-width spaces and joiners, the byte order mark, the soft hyphen, ...).
func isInvisible(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}

// cleanForParse is the common first step of the parsers: it also decodes HTML entities, in case a
// site double-escaped them (a literal "&nbsp;" in the text).
func cleanForParse(raw string) string {
	if strings.Contains(raw, "&") {
		raw = html.UnescapeString(raw)
	}
	return CleanText(raw)
}

// unknownValues are the texts sites show instead of a value they do not publish: a dash, "closed"
// (마감, 예약마감), "sold out" (매진) or "ask us" (문의, 전화문의). They mean unknown, not zero.
var unknownValues = map[string]bool{
	"": true, "-": true, "–": true, "—": true, "－": true,
	"마감": true, "예약마감": true, "매진": true, "문의": true, "전화문의": true,
}

var (
	rePlainPrice   = regexp.MustCompile(`^(?:\d{1,3}(?:,\d{3})+|\d{1,11})$`)
	reKoreanPrice  = regexp.MustCompile(`^(?:(\d{1,6})(?:\.(\d{1,4}))?만)?(?:(\d)천)?(\d,\d{3}|\d{1,4})?$`)
	rePricePrefix  = regexp.MustCompile(`(?i)^(?:₩|￦|krw)`)
	rePriceSuffix  = regexp.MustCompile(`(?i)(?:원|krw)$`)
	rePlayers      = regexp.MustCompile(`^(\d{1,3})(?:명|인)?(?:[~\-～〜](\d{1,3})(?:명|인)?)?$`)
	reTeeTime      = regexp.MustCompile(`^(오전|오후|am|pm|a\.m\.|p\.m\.)?(\d{1,2})(?::(\d{2})(?::(\d{2}))?|시(?:(\d{1,2})분|반)?)(오전|오후|am|pm|a\.m\.|p\.m\.)?$`)
	reSpaceRemoval = strings.NewReplacer(" ", "")
	reHHMM         = regexp.MustCompile(`^\d{4}$`) // 0630, as booking APIs send it
)

// ParsePrice reads a green fee in won: "150,000원", "150000", "₩150,000", "150,000 KRW", "15만원",
// "15만 5천원", "15.5만원", "1만5,000원". A dash, 마감, 매진, 문의 or empty text is an unknown price:
// nil and no error. Anything else, or a price above MaxPriceKRW, is an error wrapping ErrBadPrice.
func ParsePrice(raw string) (*int64, error) {
	s, unknown, err := numberText(raw, ErrBadPrice)
	if unknown || err != nil {
		return nil, err
	}
	s = rePricePrefix.ReplaceAllString(s, "")
	s = rePriceSuffix.ReplaceAllString(s, "")
	v, ok := priceValue(s)
	if !ok || v > MaxPriceKRW {
		return nil, fmt.Errorf("%w %q", ErrBadPrice, truncate(raw, 64))
	}
	return &v, nil
}

// numberText is the text of a price or players cell made ready to parse (cleaned, spaces
// removed); unknown for a dash, 마감 and the like; an error wrapping bad for text that is too long.
func numberText(raw string, bad error) (s string, unknown bool, err error) {
	if len(raw) > maxFieldLen {
		return "", false, fmt.Errorf("%w %q: too long", bad, truncate(raw, 64))
	}
	s = cleanForParse(raw)
	if unknownValues[s] {
		return "", true, nil
	}
	return reSpaceRemoval.Replace(s), false, nil
}

func priceValue(s string) (int64, bool) {
	if rePlainPrice.MatchString(s) {
		v, err := strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64)
		return v, err == nil
	}
	m := reKoreanPrice.FindStringSubmatch(s)
	switch {
	case m == nil, m[1] == "" && m[3] == "": // plain numbers were handled above
		return 0, false
	case m[2] != "" && (m[3] != "" || m[4] != ""): // 15.5만5천: mixed notations, a misread
		return 0, false
	}
	var v int64
	if m[1] != "" {
		v += int64(atoi(m[1])) * 10_000
		if frac := m[2]; frac != "" { // 15.5만: the fraction of ten thousand, up to 4 digits
			v += int64(atoi(frac + strings.Repeat("0", 4-len(frac))))
		}
	}
	if m[3] != "" {
		v += int64(atoi(m[3])) * 1_000
	}
	if m[4] != "" {
		rest := atoi(strings.ReplaceAll(m[4], ",", ""))
		if m[3] != "" && rest >= 1_000 { // 5천5,000: the remainder overlaps the thousands
			return 0, false
		}
		v += int64(rest)
	}
	return v, true
}

// ParsePlayers reads the number of players a tee time is sold for: "4명", "4인", "4", or a range
// "3~4명" / "2-4인", of which the maximum is taken (the listing's capacity). Empty text, a dash,
// 마감 and the like are unknown: nil and no error. Counts outside 1..MaxPlayers, a reversed range
// and anything else are errors wrapping ErrBadPlayers.
func ParsePlayers(raw string) (*int, error) {
	s, unknown, err := numberText(raw, ErrBadPlayers)
	if unknown || err != nil {
		return nil, err
	}
	m := rePlayers.FindStringSubmatch(s)
	if m == nil {
		return nil, fmt.Errorf("%w %q", ErrBadPlayers, truncate(raw, 64))
	}
	n := atoi(m[1])
	if m[2] != "" {
		hi := atoi(m[2])
		if hi < n {
			return nil, fmt.Errorf("%w %q: reversed range", ErrBadPlayers, truncate(raw, 64))
		}
		n = hi
	}
	if n < 1 || n > MaxPlayers {
		return nil, fmt.Errorf("%w %q: %d outside 1..%d", ErrBadPlayers, truncate(raw, 64), n, MaxPlayers)
	}
	return &n, nil
}

// ParseTeeTime reads a tee time into "HH:MM" (24-hour): "07:30", "7:30", "07:30:00", "0730", "07시 30분",
// "7시", "7시 반", "오전 7:30", "오후 1:05" (13:05), "1:05 PM". With 오전/오후 (AM/PM) the hour is
// 1..12 (12 오전 is 00, 12 오후 is 12; 0 오전 is accepted as 00); without, 0..23. Seconds, if
// shown, must be 00. Anything else is an error wrapping ErrBadTeeTime.
func ParseTeeTime(raw string) (string, error) {
	s := strings.ToLower(reSpaceRemoval.Replace(cleanForParse(raw)))
	bad := func(why string) (string, error) {
		if why != "" {
			return "", fmt.Errorf("%w %q: %s", ErrBadTeeTime, truncate(raw, 64), why)
		}
		return "", fmt.Errorf("%w %q", ErrBadTeeTime, truncate(raw, 64))
	}
	if len(raw) > maxFieldLen {
		return bad("too long")
	}
	if reHHMM.MatchString(s) {
		s = s[:2] + ":" + s[2:]
	}
	m := reTeeTime.FindStringSubmatch(s)
	if m == nil {
		return bad("")
	}
	if m[1] != "" && m[6] != "" {
		return bad("two meridiem markers")
	}
	hour, minute := atoi(m[2]), 0
	switch {
	case m[3] != "":
		minute = atoi(m[3])
		if m[4] != "" && m[4] != "00" {
			return bad("seconds must be 00")
		}
	case m[5] != "":
		minute = atoi(m[5])
	case strings.Contains(m[0], "시반"):
		minute = 30
	}
	if minute > 59 {
		return bad("minute out of range")
	}
	switch mer := m[1] + m[6]; mer {
	case "":
		if hour > 23 {
			return bad("hour out of range")
		}
	case "오전", "am", "a.m.":
		if hour > 12 {
			return bad("hour out of range for AM")
		}
		if hour == 12 {
			hour = 0
		}
	default: // 오후, pm
		if hour < 1 || hour > 12 {
			return bad("hour out of range for PM")
		}
		if hour != 12 {
			hour += 12
		}
	}
	return fmt.Sprintf("%02d:%02d", hour, minute), nil
}
