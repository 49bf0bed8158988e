fn main() {
    tokenpipe_cli::run("arrivals", tokenpipe_arrivals::main)
}
