package suggest

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// The secrets every copied request of the corpus carries, as a browser's "Copy as cURL" writes
// them: a session cookie, a CSRF header and a bearer token (and in a GET's query a CSRF token). None may reach suggest's output or
// its reasoning.
const (
	corpusSession = "corpusSess7f3a9c"
	corpusCSRF    = "corpusCsrf91b2e4"
	corpusBearer  = "corpusBearer55d0a1"
	// corpusQuery is a CSRF token some pages put in the query of their own XHR.
	corpusQuery = "corpusQuery3c8d2f"
)

// browser is the tail of a Chrome "Copy as cURL (bash)": its usual headers with the corpus's
// secrets among them.
func browser(referer string) string {
	return " \\\n  -H 'accept: */*' \\\n  -H 'accept-language: ko-KR,ko;q=0.9,en-US;q=0.8' \\\n" +
		"  -b '_ga=GA1.1.20261202; JSESSIONID=" + corpusSession + "; _gid=GA1.1.77' \\\n" +
		"  -H 'authorization: Bearer " + corpusBearer + "' \\\n" +
		"  -H 'referer: " + referer + "' \\\n" +
		"  -H 'user-agent: Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36' \\\n" +
		"  -H 'x-csrf-token: " + corpusCSRF + "' \\\n  -H 'x-requested-with: XMLHttpRequest'"
}

// origin is where a corpus shape's request and answer shapes came from.
type origin int

const (
	// fromCrawler: public crawler code of tee-time sites (what it sends and reads).
	fromCrawler origin = iota
	// fromServer: public server-side code, a page template or a recorded answer of a real booking
	// site (the names, casing and formats the server itself writes).
	fromServer
	// fromDocs: a booking API as its maintainers described it in public.
	fromDocs
	// fromOwn: the project's own (from an issue's description or the simulator's first shapes).
	fromOwn
)

// corpusShape is one site shape of the corpus: the request a golfer copies, what the shape
// shows of the model, and what a right entry for it looks like.
type corpusShape struct {
	name   string
	desc   string // the shape in a line, for the docs table
	source string // the public repository and file its request and answer shapes came from
	origin origin
	// backend names the server software of a fromServer shape (shapes of one backend share it).
	backend string
	// curl is the copied request for play date day; url, for a GET, the bare URL ("" otherwise).
	curl func(base string, day time.Time) string
	url  func(base string, day time.Time) string
	// clubs are the model's courses the shape shows (nil: every one); players whether it shows
	// the players; noPrice that it shows no price; teamPrice that its price is a team of four's.
	clubs     []int
	players   bool
	noPrice   bool
	teamPrice bool
	// partHidden: no row shows its course part as text (a code in an attribute at most), so the
	// golfer's example row names none.
	partHidden bool
	cfg        func(c *sitesim.Config, day time.Time)
	// noTargets: suggest is given no --target (a page of every club).
	noTargets bool
	// oneClub: the page is of one club, whose only target (no id in the request) names it.
	oneClub bool
	// login: the site needs a login; the entry's login block's credential variables are set.
	login bool
	// live starts the golfer's session on the site as the browser did before the copied request
	// (the form page that gave a CSRF token, the main page that gave a session id): the values
	// that stand for its placeholders in the copied request, each a secret of the run.
	live func(tb testing.TB, base string) map[string]string
	// personal are values of the golfer's own in the copied request (a phone number, a member
	// number): the run notes it when one reaches suggest's output or stderr.
	personal []string
	// baseline: one of the 16 shapes of fdee6ed, which crawled the truth unedited; it must still.
	baseline bool
	// unedited: the shape must crawl the truth unedited too, as the baseline's must (a shape of
	// issue #49's first paragraph, which suggest decides alone now).
	unedited bool
	// entry, where set, checks what crawling the simulated week cannot show of an entry that
	// exits 0: a problem, or "" (the far date's not-open code, say).
	entry func(st *site.Site) string
	// hand names the shape's hand-written entry in the simulator's corpus file
	// (crawler/sitesim/corpus.yaml, sitesim.CorpusEntry), which crawls the shape's truth: what a
	// right entry looks like, and the proof that one exists (TestCorpusHandWritten).
	hand string
}

// The days of the corpus's request forms.
func iso(d time.Time) string { return d.Format("2006-01-02") }
func d8(d time.Time) string  { return d.Format("20060102") }

// formPost is a copied form POST of body to path, with the browser's headers.
func formPost(b, path, referer, body string) string {
	return "curl '" + b + path + "'" + browser(b+referer) +
		" \\\n  -H 'content-type: application/x-www-form-urlencoded; charset=UTF-8' \\\n  --data-raw '" + body + "'"
}

// corpusShapes is the corpus: fdee6ed's sixteen shapes, then the second round's, then the shapes
// of the sites language's forms.
func corpusShapes() []corpusShape {
	return slices.Concat(baselineShapes(), secondRoundShapes(), langShapes())
}

func baselineShapes() []corpusShape {
	shapes := []corpusShape{
		{name: "teescanner json get", hand: "sim-teescanner", source: "dlfmzlspdh764-svg/golf-fees-pohang-gyeongju-yeongcheon refresh.py",
			desc:    "JSON GET; names in HTML entities; `min_orgin_cost` (list price) beside `min_cost`, `caddie_name`, `benefit_comment`, `discount_yn`, `is_4p` per row",
			players: true,
			url: func(b string, d time.Time) string {
				return b + sitesim.PathTeescanner + "?golfclub_seq=138&roundDay=" + iso(d) + "&orderType="
			}},
		{name: "aggregator json get", source: "dlfmzlspdh764-svg/golf-fees-pohang-gyeongju-yeongcheon refresh.py (parameters renamed)",
			desc: "JSON GET; numbers sometimes as strings, `HH:MM:SS` times", players: true,
			url: func(b string, d time.Time) string {
				return b + sitesim.PathAPIGet + "?club=138&roundDay=" + iso(d)
			}},
		{name: "caddie per row json get", hand: "sim-json-caddie", source: "dlfmzlspdh764-svg/golf-fees-pohang-gyeongju-yeongcheon refresh.py (caddie_name)",
			desc: "JSON GET; each row's caddie, changing every 6 hours", players: true,
			url: func(b string, d time.Time) string {
				return b + sitesim.PathJSONCaddie + "?ccId=139&ymd=" + d8(d)
			}},
		{name: "json post body", source: "the project's own (sources.go)", origin: fromOwn, players: true,
			desc: "JSON POST body (`{\"clubId\", \"date\"}`), `HHMM` times",
			curl: func(b string, d time.Time) string {
				return "curl '" + b + sitesim.PathAPIPost + "'" + browser(b+"/golf/138") +
					" \\\n  -H 'content-type: application/json' \\\n  --data-raw '{\"clubId\":\"138\",\"date\":\"" + d8(d) + "\"}'"
			}},
		{name: "json mm/dd dates", hand: "sim-json-mmdd", source: "the project's own (sources_observed.go)", origin: fromOwn, players: true,
			desc: "JSON GET; year-less `MM/DD` dates across the new year",
			url: func(b string, d time.Time) string {
				return b + sitesim.PathJSONMMDD + "?ccNo=139&playDate=" + d8(d)
			}},
		{name: "controller form post json", hand: "sim-reservation-controller", source: "jaehyunlee25/teezzim_webview_server script/search_core/allday.js", players: true,
			desc: "form POST answering JSON; `BK_BASIC_CHARGE` (list) and `BK_CHARGE` (paid) with commas",
			curl: func(b string, d time.Time) string {
				return formPost(b, sitesim.PathReservationController, "/reservation/real.asp", "method=getTeeList&coDiv=138&cos=All&part=All&date="+d8(d))
			}},
		{name: "ajax html list and sale price", hand: "sim-realtime-list", source: "jaehyunlee25/teezzim_webview_server script/search_core/adelscott.js",
			desc: "form POST answering an HTML fragment; 정상가 and 할인가, a benefit cell, a `No` column, a sold-out marker row",
			curl: func(b string, d time.Time) string {
				return formPost(b, sitesim.PathRealTimeList, "/GolfRes/onepage/real_reservation.asp",
					"golfrestype=real&courseid=138&usrmemcd=13&pointdate="+d8(d)+"&openyn=1&dategbn=4&choice_time=00&cssncourseum=&inputtype=I")
			}},
		{name: "html list price struck through, meeting time", hand: "sim-prices-html", source: "jaehyunlee25/teezzim_webview_server script/search/lakeside.js",
			desc: "form POST answering an HTML table; 정상가 struck through (`<del>`) beside 할인가, a meeting time before the tee time",
			curl: func(b string, d time.Time) string {
				return formPost(b, sitesim.PathPricesHTML, "/reservation/real.do", "golfResType=real&clubCd=138&pointDate="+d8(d))
			}},
		{name: "json greenfee and onegreenfee", hand: "sim-prices-json", source: "jaehyunlee25/teezzim_webview_server script/search_core/cygnus.js",
			desc: "JSON GET; `greenfee` (list) and `onegreenfee` (paid)",
			url: func(b string, d time.Time) string {
				return b + sitesim.PathPricesJSON + "?requestType=get&gc=138&chosenDate=" + iso(d)
			}},
		{name: "calendar then Book_time links, euc-kr", hand: "sim-book-calendar", source: "jaehyunlee25/teezzim_webview_server script/search/island.js",
			desc:  "a calendar, then a form POST `book_date=YYYYMMDD`; values only in `JavaScript:Book_time(…)` links; EUC-KR by `<meta>`; a not-open alert past the window",
			clubs: []int{sitesim.CalendarClub}, oneClub: true,
			curl: func(b string, d time.Time) string {
				return "curl '" + b + sitesim.PathBookCalendar + "'" + browser(b+sitesim.PathBookCalendar) +
					" \\\n  -H 'content-type: application/x-www-form-urlencoded' \\\n  --data-raw 'book_date=" + d8(d) + "'"
			}},
		{name: "korean times and prices", hand: "sim-korean-grid", source: "jaehyunlee25/teezzim_webview_server script/search_core/delphino.js",
			desc: "form POST answering `div` rows of classless `span`s; `06시 30분`, `07시`, `14만5천원`",
			curl: func(b string, d time.Time) string {
				return formPost(b, sitesim.PathKoreanGrid, "/m.rsv.selectMobileRsvStep.dp", "fRsvD="+d8(d)+"&fJiyukCd=60&fStoreCd=138")
			}},
		{name: "form post behind an expiring login", source: "ksh20531/pythonProject sunVally_config.py", players: true, login: true,
			desc: "login form, then a form POST whose answer needs the session; sessions expire after 15 requests",
			cfg:  func(c *sitesim.Config, _ time.Time) { c.SessionRequests = 15 },
			curl: func(b string, d time.Time) string {
				return "curl '" + b + sitesim.PathClubAJAX + "'" + browser(b+"/club/reservation") +
					" \\\n  -b '" + sitesim.SessionCookie + "=LOGIN_COOKIE' \\\n" +
					"  -H 'content-type: application/x-www-form-urlencoded; charset=UTF-8' \\\n" +
					"  --data-raw 'golfResDate=" + d8(d) + "&courseId=138'"
			}},
		{name: "one club a page get", source: "jaehyunlee25/teezzim_webview_server script/search_core/baystars.js",
			desc: "GET, one club a page, a table of course, time and fee",
			url: func(b string, d time.Time) string {
				return b + sitesim.PathClubPage + "?club_code=138&book_date=" + d8(d)
			}},
		{name: "old asp euc-kr, not open, sold-out row", hand: "sim-asp-euckr", source: "yeonjae0901/bearcreek bearcreek_checker.py", players: true,
			desc: "GET, old ASP page in EUC-KR by `<meta>`, rows without classes, a sold-out row, a not-open alert",
			cfg:  func(c *sitesim.Config, _ time.Time) { c.AlertPastWindow = true },
			url: func(b string, d time.Time) string {
				return b + sitesim.PathASP + "?gc=140&ymd=" + d.Format("2006.01.02")
			}},
		{name: "every club a page, euc-kr", hand: "sim-euckr", source: "the project's own (euckr.go)", origin: fromOwn, players: true, noTargets: true,
			desc: "GET, every club of a date on one EUC-KR page",
			url:  func(b string, d time.Time) string { return b + sitesim.PathEUCKRPage + "?book_date=" + d8(d) }},
		{name: "html list with pages", source: "the project's own (render.go)", origin: fromOwn, players: true, noTargets: true,
			desc: "GET, an HTML list over pages (next link)",
			url:  func(b string, d time.Time) string { return b + "/tee?date=" + d8(d) + "&page=1" }},
	}
	for i := range shapes {
		shapes[i].baseline = true
	}
	return shapes
}

// courses returns a Config edit that gives the site these courses and nothing else changed.
func courses(cs ...sitesim.Course) func(*sitesim.Config, time.Time) {
	return func(c *sitesim.Config, _ time.Time) { c.Courses = cs }
}

// partless are four courses without parts (APIs whose rows name none).
var partless = []sitesim.Course{
	{Name: "파인힐스 CC", BasePriceKRW: 150000}, {Name: "레이크&힐스 CC", BasePriceKRW: 180000},
	{Name: "스카이밸리 GC", BasePriceKRW: 120000}, {Name: "오션뷰 골프클럽", BasePriceKRW: 210000},
}

func secondRoundShapes() []corpusShape {
	return []corpusShape{
		{name: "green fee and per-team cart fee", origin: fromOwn, source: "the project's own, from issue #49 (sources_corpus2.go)",
			desc: "JSON GET; `GREEN_FEE` 130,000–200,000 beside `CART_FEE`, 100,000 on every row",
			cfg: courses(sitesim.Course{Name: "그린밸리 CC", Parts: []string{"OUT", "IN"}, BasePriceKRW: 130000},
				sitesim.Course{Name: "카트힐스 CC", Parts: []string{"OUT", "IN"}, BasePriceKRW: 140000}),
			url: func(b string, d time.Time) string {
				return b + sitesim.PathGreenCartFee + "?golfId=138&playDate=" + iso(d)
			},
			hand: "sim-green-cart-fee"},
		{name: "course names unique on the sample date only", origin: fromOwn, source: "the project's own, from issue #49 (sources.go's JSON POST)",
			desc:    "JSON POST; `CourseName` OUT, IN, EAST; the three nines tee off 3 minutes apart on the sample date only, so its tee times are unique without the name",
			players: true,
			cfg: func(c *sitesim.Config, day time.Time) {
				parts := []string{"OUT", "IN", "EAST"}
				c.Courses = []sitesim.Course{{Name: "삼나인 CC", Parts: parts, BasePriceKRW: 150000}, {Name: "트리플 CC", Parts: parts, BasePriceKRW: 170000}}
				c.PartStart = func(d time.Time, part int) time.Duration {
					if d.Format("2006-01-02") == day.Format("2006-01-02") {
						return time.Duration(part) * 3 * time.Minute
					}
					return 0
				}
			},
			curl: func(b string, d time.Time) string {
				return "curl '" + b + sitesim.PathAPIPost + "'" + browser(b+"/golf/138") +
					" \\\n  -H 'content-type: application/json' \\\n  --data-raw '{\"clubId\":\"138\",\"date\":\"" + d8(d) + "\"}'"
			},
			hand: "sim-api-post-staggered"},
		{name: "not-open code beside a sold-out empty list", origin: fromOwn, source: "the project's own, from issue #49 (sources_corpus2.go)",
			desc:    "JSON GET; a date past the window answers `rtnCode` 9001 \"예약 가능한 일자가 아닙니다.\", a sold-out date 0000 and an empty list",
			players: true,
			url: func(b string, d time.Time) string {
				return b + sitesim.PathRtnCode + "?clubId=138&ymd=" + d8(d)
			},
			hand: "sim-rtn-code"},
		{name: "the play date's month in the request", origin: fromOwn, source: "the project's own, from issue #49 item 5 (sources_corpus2.go)",
			desc:    "JSON GET; `selYM=202512` beside `selDate=20251229`; a month that is not the date's is refused (`resultCode` 9100)",
			players: true,
			url: func(b string, d time.Time) string {
				return b + sitesim.PathMonthTeeList + "?coDiv=138&selYM=" + d.Format("200601") + "&selDate=" + d8(d)
			},
			hand: "sim-month-tee-list"},
		{name: "itsone getTeeList.do, charge triple", origin: fromServer, backend: "Korean club booking backend on Spring/JSP (getTeeList.do, BK_* rows)",
			source: "fnb-rnd-greenit/ROUTE52 ROUTE52/src/main/webapp/WEB-INF/jsp/hills/reservation/reservation.jsp (04da942), js/tools.js, js/globals.js",
			desc:   "jQuery GET `?&date=YYYYMMDD&_=<ms>` answering JSON; `BK_COS` beside `BK_COS_NM`, `BK_CHARGE` \"21,180000,M\" (the price is the middle), `BK_BASIC_CHARGE` (list), `BK_PERSON_CD` 01/02, promotion and royal-time columns of zeros and X",
			clubs:  []int{0}, oneClub: true,
			cfg: func(c *sitesim.Config, _ time.Time) {
				c.Courses = []sitesim.Course{{Name: "루트힐스 CC", Parts: []string{"밸리", "레이크", "마운틴"}, BasePriceKRW: 150000}}
				c.AlwaysPriced = true
			},
			url: func(b string, d time.Time) string {
				return b + sitesim.PathITSONETeeList + "?&date=" + d8(d) + "&_=1766903100000"
			},
			hand: "sim-itsone-tee-list"},
		{name: "member page, part only in a heading", origin: fromServer, backend: "a club's classic ASP server on IIS",
			source: "ispope45/Script TestDir/sejong/reservation.real_timeList.asp (a recorded answer)",
			desc:   "form POST `txtDate=YYYY-MM-DD` with the member's phone; the member's own bookings first; per part a `LAKE 코스` heading over rows of No., TIME, HOLE; the part's code only in `p.resv`'s `course`; header rows of `td`",
			clubs:  []int{0}, oneClub: true, noPrice: true, partHidden: true, personal: []string{"5512", "7734"},
			cfg: courses(sitesim.Course{Name: "에머슨힐 CC", Parts: []string{"1", "2", "3"}, BasePriceKRW: 160000}),
			curl: func(b string, d time.Time) string {
				return formPost(b, sitesim.PathMemberTimeList, "/reservation/real_calendar.asp",
					"txtFlag=&txtDate="+iso(d)+"&txtCourse=&txtCourseDesc=&txtTime=&txtStat=&txtRsvnNo=&txtMode=I&txtCaddy=&txtRemark=&tel1=010&tel2=5512&tel3=7734")
			},
			hand: "sim-member-time-list"},
		{name: "agency club page, team price, booked rows kept", origin: fromServer, backend: "a booking agency's JSP site (scriptlets over JDBC DAOs)",
			source:    "perabopr/goodjob-golf trunk/GoodJob_Golf/forGolfbooking/detailReal.jsp",
			desc:      "GET `golf=ID&date=<strip start>&cdate=YYYYMMDD`; a price box and a 14-day strip above table#tbReserveList; 할인요금(4人기준), a team of four's price; 없음 for a club without parts; booked tee times stay with a `btn_regist_no` image",
			teamPrice: true,
			cfg:       func(c *sitesim.Config, _ time.Time) { c.AlwaysPriced = true },
			url: func(b string, d time.Time) string {
				return b + sitesim.PathAgencyDetail + "?menu=1&golf=138&date=" + d8(d.AddDate(0, 0, -1)) + "&cdate=" + d8(d)
			},
			hand: "sim-agency-detail"},
		{name: "agency search, every club, pre-booking table", origin: fromServer, backend: "a booking agency's JSP site (scriptlets over JDBC DAOs)",
			source:  "perabopr/goodjob-golf trunk/GoodJob_Golf/forGolfbooking/searchList.jsp",
			desc:    "form POST of a date range (YYYY-MM-DD); every club's open tee times, one row each (date, club, time, part); a second table of pre-booking windows (`07:00~08:00`); no price",
			noPrice: true, noTargets: true,
			curl: func(b string, d time.Time) string {
				return formPost(b, sitesim.PathAgencySearch, "/forGolfbooking/search.jsp",
					"ddlSearchRegion=&ddlSearchMenu=1&txtSearchStartDate="+iso(d)+"&txtSearchEndDate="+iso(d))
			},
			hand: "sim-agency-search"},
		{name: "member tee sheet, time in a submit button", origin: fromServer, backend: "US club software's Java servlets (member tee sheet)",
			source: "uksubs66/java-v2 \"Java-v2 copy/Member_sheet.java\" (mobile branch)",
			desc:   "GET `calDate=MM/DD/YYYY&displayOpt=All`; table#times; an open time only in its form's `input[type=submit]` value (`7:30 AM`), a full one as text; F/B the part; members' names in Players and in hidden `wasP1`…; a notice past the window",
			clubs:  []int{0}, oneClub: true, noPrice: true,
			cfg: courses(sitesim.Course{Name: "Oak Hollow Country Club", Parts: []string{"F", "B"}, BasePriceKRW: 150000}),
			url: func(b string, d time.Time) string {
				return b + sitesim.PathTeeSheet + "?calDate=" + url.QueryEscape(d.Format("01/02/2006")) + "&course=-ALL-&displayOpt=All"
			},
			hand: "sim-tee-sheet"},
		{name: "ota api, tee types, fees per row", origin: fromServer, backend: "a Go (gin) course-management server's OTA API",
			source: "cristianongan/golf controllers/CTeeTimeOTA.go, controllers/response/BookingOTARes.go, controllers/request/RBookingOTA.go",
			desc:   "JSON POST `{Token, CourseCode, Date, OTA_Code, Guest_Code, Hole, TeeType}`; rows of `TeeOffStr`, `Part` (the wave), `TimeIndex`, `NumBook`, `TeeType` 1A/1B/1C (the part), `GreenFee` beside `CaddieFee` and `BuggyFee`; the request echoed",
			cfg: func(c *sitesim.Config, _ time.Time) {
				parts := []string{"1A", "1B", "1C"}
				c.Courses = []sitesim.Course{{Name: "Lotus Valley Golf", Parts: parts, BasePriceKRW: 150000}, {Name: "Jade Hills Golf", Parts: parts, BasePriceKRW: 170000}}
				c.AlwaysPriced = true
			},
			curl: func(b string, d time.Time) string {
				return "curl '" + b + sitesim.PathOTATeeTimes + "'" + browser(b+"/ota/console") +
					" \\\n  -H 'content-type: application/json' \\\n  --data-raw '{\"Token\":\"9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08\",\"CourseCode\":\"138\",\"Date\":\"" + iso(d) +
					"\",\"isMainCourse\":false,\"OTA_Code\":\"TEEZ-OTA\",\"Guest_Code\":\"GUEST-OTA-01\",\"Hole\":18,\"course\":\"\",\"TeeType\":\"\"}'"
			},
			hand: "sim-ota-tee-times"},
		{name: "php api, top-level array, prices with cents", origin: fromDocs,
			source:  "robinneb/golfzing issues #13 and #28 (GetCourseTeeTimes.php, described by its maintainers)",
			desc:    "JSON GET answering a top-level array under `text/html`; every value a string; `time` HH:MM:SS; `rate` \"150000.00\" beside `rack`, `rewards_cost`; `available` beside `allowed_golfers` \"1,2,3,4\"",
			players: true, cfg: courses(partless...),
			url: func(b string, d time.Time) string {
				return b + sitesim.PathZingTeeTimes + "?nid=138&key=1234&date=" + iso(d)
			},
			hand: "sim-zing-tee-times"},
		{name: "foreup times api, date and time in one", origin: fromCrawler,
			source:  "austinsomer/golfgpt-app services/scraper/src/scrapers/foreup.ts, types.ts",
			desc:    "JSON GET `date=MM-DD-YYYY&schedule_id=..&api_key=no_limits` answering a top-level array; `time` \"2025-12-29 06:30\"; `available_spots`, `green_fee` (null when none); `false` for an unknown schedule",
			players: true, cfg: courses(partless...),
			url: func(b string, d time.Time) string {
				return b + sitesim.PathForeUpTimes + "?time=all&date=" + d.Format("01-02-2006") + "&holes=all&players=0&schedule_id=138&specials_only=0&api_key=no_limits"
			},
			hand: "sim-foreup-times"},
		{name: "date in the path, top-level array", origin: fromCrawler,
			source: "jaehyunlee25/teezzim_webview_server script/search_core/haera.js (geojeview.js, highest.js)",
			desc:   "GET `/booking/time/YYYYMMDD` answering a top-level array; `bk_cours` A/B, `bk_green_fee` \"150,000\", `bk_time` HHMM",
			clubs:  []int{0}, oneClub: true,
			cfg:  courses(sitesim.Course{Name: "해오름 CC", Parts: []string{"A", "B"}, BasePriceKRW: 150000}),
			url:  func(b string, d time.Time) string { return b + sitesim.PathBookingTimePrefix + d8(d) },
			hand: "sim-booking-time"},
		{name: "part only in a data attribute, spaced times", origin: fromCrawler,
			source: "jaehyunlee25/teezzim_webview_server script/search_core/hanmir.js",
			desc:   "form POST `mode=mobile&date=YYYYMMDD` answering table.tbl02; the part only in `data-coursekor`, 1부/2부 in the first cell, `06 : 30`; no price",
			clubs:  []int{0}, oneClub: true, noPrice: true,
			cfg: courses(sitesim.Course{Name: "한마루 CC", Parts: []string{"레이크", "마운틴"}, BasePriceKRW: 90000}),
			curl: func(b string, d time.Time) string {
				return formPost(b, sitesim.PathAjaxTimeList, "/Reservation/Reservation", "mode=mobile&date="+d8(d)+"&changeDate=&changeSeq=&course=")
			},
			hand: "sim-ajax-time-list"},
		{name: "aspx view state, fees in link arguments", origin: fromCrawler,
			source: "jaehyunlee25/teezzim_webview_server script/search_core/hiddenvalley.js",
			desc:   "ASP.NET form POST with `__VIEWSTATE` and `Choice_Date=YYYY-MM-DD`; `li.bt_reserved` links whose arguments hold the part's code, the time and, last, the list price after the paid one; spans show the part, time and paid price",
			clubs:  []int{0}, oneClub: true,
			cfg: courses(sitesim.Course{Name: "히든힐 CC", Parts: []string{"Hidden", "Sky", "Valley"}, BasePriceKRW: 140000}),
			curl: func(b string, d time.Time) string {
				return formPost(b, sitesim.PathASPXTimeList, "/Mobile/Reservation/Reservation.aspx",
					"__VIEWSTATE=%2FwEPDwUKMTY1NDU2MTA1Mg9kFgICAw9kFgICAQ8WAh4EVGV4dAUKMjAyNTEyMjg%3D&__VIEWSTATEGENERATOR=C5D2A3B1&__EVENTVALIDATION=%2FwEdAAS0hWm0&Choice_Date="+iso(d)+
						"&Choice_Time=&Choice_Course=&Day_Gubun=1&hdnSeq=&choice_hole=&DaegiYN1=&htbArgs=")
			},
			hand: "sim-aspx-time-list"},
	}
}

// langShapes are the shapes whose right entry needs a form of the sites language of issue #48
// (sources_lang.go): a sale price else the list price, a table whose course cell spans its rows,
// JSON rows nested in groups.
func langShapes() []corpusShape {
	return []corpusShape{
		{name: "getTeeList, sale price else list price", origin: fromServer,
			backend: "Korean club booking backend on Spring/JSP (getTeeList.do, BK_* rows)",
			source: "ShineKimm/podospring-jsp-version src/main/java/podo/podospring/dao/ReservationDAO.java, " +
				"src/main/resources/mappers/Reservation_SQL.xml, src/main/webapp/WEB-INF/views/reservation/reservation.jsp",
			desc: "form POST with the member's `msNum`, answering JSON that echoes the request; `BK_COS` (A/B) beside `BK_COS_NM`, `BK_ROUNDF` \"1\" (18 holes, no players), " +
				"`BK_B_CHARGE_NM` (list) beside `BK_S_CHARGE_NM` (the sale price, \"\" when none); `rtnCode` 9001 past the window, 0000 and no rows when sold out",
			personal: []string{sitesim.MemberNumber}, unedited: true,
			curl: func(b string, d time.Time) string {
				return formPost(b, sitesim.PathGetTeeList, "/reservation/reservation.do", "coDiv=138&date="+d8(d)+"&cos=All&msNum="+sitesim.MemberNumber)
			},
			entry: func(st *site.Site) string {
				if j := st.JSON; j == nil || len(j.NotOpenWhen) != 1 || j.NotOpenWhen[0].Equals != "9001" {
					return "json.not_open_when is not rtnCode 9001 (the far date's answer, not the sold-out 0000 and an empty list)"
				}
				return ""
			},
			hand: "lang-sale-else-list"},
		{name: "course cell spanning its rows", origin: fromOwn, source: "the project's own, from issue #48 (sources_lang.go)",
			desc:    "GET answering an HTML table whose course cell spans its course's rows (`<td rowspan=\"9\">동코스</td>`), cells without classes, the row's values again in `fnReserve(…)`; a sold-out marker row",
			players: true, unedited: true,
			url: func(b string, d time.Time) string {
				return b + sitesim.PathTimeTable + "?club=138&date=" + d8(d)
			},
			hand: "lang-rowspan"},
		{name: "rows nested in date and course groups", origin: fromOwn, source: "the project's own, from issue #48 (sources_lang.go)",
			desc:    "JSON GET; rows nested dates → courses → times, the dates an object keyed by `2006-01-02` holding the requested date and the next; `courseNm` on the course group; `count`",
			players: true, unedited: true,
			url: func(b string, d time.Time) string {
				return b + sitesim.PathGroupedTimes + "?clubId=138&date=" + iso(d)
			},
			hand: "lang-grouped"},
		{name: "csrf token of the form page", origin: fromOwn, source: "the project's own, from issue #48 (sources_lang.go)",
			desc:    "form POST answering JSON whose session (a `CSRFSESS` cookie) needs the `_csrf` token the form page (`form#rsvForm`'s hidden input) gave it; 403 without it",
			players: true, unedited: true, live: csrfSession,
			curl: func(b string, d time.Time) string {
				return "curl '" + b + sitesim.PathCSRFTimes + "'" + browser(b+sitesim.PathCSRFForm) +
					" \\\n  -b '" + sitesim.CSRFCookie + "=CSRF_SESSION' \\\n" +
					"  -H 'content-type: application/x-www-form-urlencoded; charset=UTF-8' \\\n" +
					"  --data-raw '_csrf=CSRF_TOKEN&club=138&date=" + d8(d) + "'"
			},
			hand: "lang-csrf"},
		{name: "session id in the links", origin: fromOwn, source: "the project's own, from issue #48 (sources_lang.go)",
			desc:    "GET `real_list.asp?sid=…&club=ID&date=YYYYMMDD`: the session id the main page's links carry, no cookie; without a live one an alert and `location.href` to the main page",
			players: true, unedited: true, live: sidSession,
			url: func(b string, d time.Time) string {
				return b + sitesim.PathSIDList + "?sid=SESSION_ID&club=138&date=" + d8(d)
			},
			hand: "lang-sid"},
	}
}

var (
	reCSRFInput = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)
	reSIDLink   = regexp.MustCompile(`sid=([0-9a-f]+)`)
)

// csrfSession opens the CSRF shape's form page as the golfer's browser did: its session cookie
// and the token the page shows.
func csrfSession(tb testing.TB, base string) map[string]string {
	tb.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		tb.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodGet, base+sitesim.PathCSRFForm, nil)
	if err != nil {
		tb.Fatal(err)
	}
	_, page := testkit.Do(tb, &http.Client{Jar: jar}, req)
	m := reCSRFInput.FindStringSubmatch(page)
	for _, c := range jar.Cookies(req.URL) {
		if c.Name == sitesim.CSRFCookie && m != nil {
			return map[string]string{"CSRF_SESSION": c.Value, "CSRF_TOKEN": m[1]}
		}
	}
	tb.Fatal("the form page gave no session cookie or token")
	return nil
}

// sidSession opens the session-id shape's main page as the golfer's browser did: the session id
// its links carry.
func sidSession(tb testing.TB, base string) map[string]string {
	tb.Helper()
	_, page := testkit.Get(tb, base+sitesim.PathSIDMain)
	m := reSIDLink.FindStringSubmatch(page)
	if m == nil {
		tb.Fatal("the main page's links carry no session id")
	}
	return map[string]string{"SESSION_ID": m[1]}
}
