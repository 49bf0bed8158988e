fn main() {
    tokenpipe_cli::run("simserve", tokenpipe_sim::main)
}
