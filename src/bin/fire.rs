fn main() {
    tokenpipe_cli::run_anyhow("fire", tokenpipe_fire::main)
}
