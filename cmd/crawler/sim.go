package main

import (
	"context"
	"fmt"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
)

const simEnvHelp = `Environment:
  SIM_CLUB_USER, SIM_CLUB_PASSWORD   the login of the club routes (/club/login); default golfer and the
                              development password ` + sitesim.DevPassword + `, which compose/dev/sites.yaml's
                              sim-club-login also uses when the variables are unset
` + logEnvHelp

// simCmd is `crawler sim`: the simulated booking site with the demo dynamics.
func simCmd(ctx context.Context, env cli.Env, args []string) error {
	fs := env.NewFlagSet("sim", "Serve the simulated booking site (crawler/sitesim) until SIGINT or SIGTERM: four courses,\n"+
		"14 days of tee times released at 09:00 KST, bookings (weekend mornings fastest, --booking-speed\n"+
		"times faster than a real site, counted from start-up) and expiries at the tee time. Its clock is\n"+
		"the real one unless --speed says otherwise; every response carries it in the X-Sim-Now header.\n"+
		"The same tee times are also served as a JSON API (GET /api/getTeeTimeList, POST\n"+
		"/api/v2/teetime/list), a login-guarded form POST (/club/login, /club/ajax/teeList) and one\n"+
		"club per page (/list.asp). Also serves /healthz, /robots.txt and /ground-truth?from=&to=.\n"+
		"With --generate FILE it serves nothing and writes the practice set instead (crawler sim --generate --help).",
		simEnvHelp)
	addr := fs.String("addr", sitesim.DefaultAddr, "listen `address` (compose/dev/sites.yaml points at the default)")
	seed := fs.Int64("seed", 1, "random `seed` of the site's model: the same seed serves the same pages")
	speed := fs.Float64("speed", 1, "how many simulated seconds pass per real second; above 1 the site's clock\n"+
		"runs ahead of the crawler's, which then calls some expired listings booked")
	booking := fs.Float64("booking-speed", sitesim.DemoBookingSpeed, "divides the mean time to book (24 h for a weekend morning ... 240 h)")
	cancels := fs.Bool("cancellations", false, "give booked tee times back: waves of cancellations before the clubs' penalty deadlines\n"+
		"(5 and 3 days before and the day before, 17:00), each open for an exponential time of median 3m until\n"+
		"booked again, and flickers of 5-25 s (a checkout hold released and retaken); /ground-truth lists each\n"+
		"reopening with when it was open")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *speed <= 0 {
		return fmt.Errorf("%w: --speed must be positive", cli.ErrUsage)
	}
	if *booking <= 0 {
		return fmt.Errorf("%w: --booking-speed must be positive", cli.ErrUsage)
	}
	cfg := sitesim.DemoConfig(*seed)
	cfg.BookingSpeed = *booking
	if *cancels {
		cfg.Cancellations = &sitesim.Cancellations{}
	}
	cfg.LoginUser = cli.EnvOr(env.Getenv, "SIM_CLUB_USER", sitesim.DefaultUser)
	cfg.LoginPassword = cli.EnvOr(env.Getenv, "SIM_CLUB_PASSWORD", sitesim.DevPassword)
	if *speed != 1 {
		cfg.Now = sitesim.SpeedClock(time.Now, time.Now(), cfg.Now(), *speed)
	}
	return sitesim.ListenAndServe(ctx, *addr, cfg, env.Logger)
}

// healthcheckCmd is `crawler healthcheck`: the Docker healthcheck of the distroless image.
func healthcheckCmd(ctx context.Context, env cli.Env, args []string) error {
	fs := env.NewFlagSet("healthcheck", "GET --url and exit 0 if it answers 200 OK, 1 otherwise (the distroless image has no curl).",
		simEnvHelp)
	url := fs.String("url", "http://"+defaultMetricsAddr+"/healthz", "`URL` to check")
	timeout := fs.Duration("timeout", 5*time.Second, "give up after this long")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	return cli.Healthcheck(ctx, *url, *timeout)
}
