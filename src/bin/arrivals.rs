fn main() {
    tokenpipe_cli::run_anyhow("arrivals", tokenpipe_arrivals::main)
}
